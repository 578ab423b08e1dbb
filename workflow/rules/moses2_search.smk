# The Moses2 paper ("Fast, scalable phrase-based decoding") section 4.2: cube pruning's stack configurations against
# the pop limit (Table 4, Fig 6) and its queue configurations (Table 5), with a column no paper reports: search
# errors on the short verses against a near-exact reference. The model (config moses2_search.model, as
# moses_decode.smk's decoding_model): `trained` = the workflow's own model (tm_model_filtered) on the test books (the sweep
# tunes nothing); `oracle` = the Moses oracle's model on the dev verses (the committed run's). Without the oracle,
# `oracle` follows the profile's oracle_absent (common.smk: experiment_model). Where the model is `trained` and the
# oracle is present, the oracle's model is an extra run and tables (rows-oracle.jsonl, moses2_table{4,5}_oracle; no
# metrics), as moses_decode.smk's oracle tables. `weights:` adds runs of the trained model under other weights
# (common.smk weight_runs; rows-trained-<w>.jsonl, moses2_table{4,5}_trained-<w>; no metrics): the mean model
# scores of Tables 4-5 on tuned weights (issue 27).
MOSES2_SEARCH = GRID["moses2_search"] if "moses2_search" in GRID else None  # absent from the grid: not run
MOSES2_SEARCH_MODEL = experiment_model("moses2_search", MOSES2_SEARCH, "the workflow's own model, test books") if MOSES2_SEARCH else None
MOSES2_SEARCH_ORACLE_TOO = MOSES2_SEARCH_MODEL == "trained" and HAVE_ORACLE
MOSES2_SEARCH_EXTRA = (["oracle"] if MOSES2_SEARCH_ORACLE_TOO else []) + \
    (weight_runs("moses2_search", MOSES2_SEARCH_MODEL) if MOSES2_SEARCH_MODEL else [])
MOSES2_SEARCH_RUNS = {"rows": MOSES2_SEARCH_MODEL, **{f"rows-{x}": x for x in MOSES2_SEARCH_EXTRA}}  # rows file: model

if MOSES2_SEARCH_MODEL:
    ALL += [f"{OUT}/tables/moses2_table4.md", f"{OUT}/tables/moses2_table5.md", f"{OUT}/figures/moses2_fig6.png"]
    METRICS.append(f"{OUT}/metrics/moses2_search.csv")
    ALL += [f"{OUT}/tables/moses2_table{t}_{x}.md" for x in MOSES2_SEARCH_EXTRA for t in (4, 5)]

    rule moses2_search_bench:
        conda: CONDA_ENV
        input:
            BUILD,
            ini=lambda wildcards: decoding_model(MOSES2_SEARCH_RUNS[wildcards.run])[0],
            src=lambda wildcards: decoding_model(MOSES2_SEARCH_RUNS[wildcards.run])[1],
            ref=lambda wildcards: decoding_model(MOSES2_SEARCH_RUNS[wildcards.run])[2],
        output:
            f"{OUT}/raw/moses2_search/{{run}}.jsonl",
        wildcard_constraints:
            run="|".join(MOSES2_SEARCH_RUNS),
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            pops=",".join(map(str, MOSES2_SEARCH["pop_limits"])),
            queue_pop=MOSES2_SEARCH["queue_pop_limit"],
            sentences=MOSES2_SEARCH["sentences"],
            short=MOSES2_SEARCH["short_words"],
            widths=",".join(map(str, MOSES2_SEARCH["reference_widths"])),
            repeats=MOSES2_SEARCH["repeats"],
            protocol=protocol_args("moses2_search"),  # the grid's repeat protocol with the experiment's own keys
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses2_search/bench-{{run}}.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses2_search -f {input.ini} --input {input.src} --reference {input.ref} "
            "--pop-limits {params.pops} --queue-pop-limit {params.queue_pop} --sentences {params.sentences} "
            "--short-words {params.short} --reference-widths {params.widths} --repeats {params.repeats} {params.protocol} "
            "--out {output} 2> {log}"

    rule moses2_search_report:
        conda: CONDA_ENV
        input:
            f"{OUT}/raw/moses2_search/rows.jsonl",
        output:
            shown_all(expand(f"{OUT}/tables/moses2_table{{t}}.{{ext}}", t=[4, 5], ext=["csv", "md"]), "moses2_search"),
            figure=shown(f"{OUT}/figures/moses2_fig6.png", "moses2_search"),
            metrics=f"{OUT}/metrics/moses2_search.csv",
        params:
            table4=lambda wildcards, output: output[0].removesuffix(".csv"),
            table5=lambda wildcards, output: output[2].removesuffix(".csv"),
        log:
            f"{OUT}/logs/moses2_search/report.log",
        shell:
            "smtbench report moses2_search --rows {input} --table4 {params.table4} "
            "--table5 {params.table5} --figure {output.figure} --metrics {output.metrics} 2> {log}"

    if MOSES2_SEARCH_EXTRA:
        rule moses2_search_extra_report:
            """The oracle's model beside the trained one (same settings), or the trained model under other weights:
            Tables 4-5 and Fig 6 again."""
            conda: CONDA_ENV
            input:
                f"{OUT}/raw/moses2_search/rows-{{extra}}.jsonl",
            output:
                shown_all([f"{OUT}/tables/moses2_table{t}_{{extra}}.{ext}" for t in (4, 5) for ext in ("csv", "md")],
                          "moses2_search"),
                figure=shown(f"{OUT}/figures/moses2_fig6_{{extra}}.png", "moses2_search"),
            wildcard_constraints:
                extra="|".join(re.escape(x) for x in MOSES2_SEARCH_EXTRA),
            params:
                table4=lambda wildcards, output: output[0].removesuffix(".csv"),
                table5=lambda wildcards, output: output[2].removesuffix(".csv"),
            log:
                f"{OUT}/logs/moses2_search/report-{{extra}}.log",
            shell:
                "smtbench report moses2_search --rows {input} --table4 {params.table4} "
                "--table5 {params.table5} --figure {output.figure} 2> {log}"
