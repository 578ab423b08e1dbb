# Mokry 2016 section 3.3: the pipeline-tolerant decoder -> Table 3.4 and Fig 3.6 analogues. Cube pruning with the
# LM scored in full at item creation (off), lazily at pop (lazy), through the automaton queue (queue, per queue
# size), or through it before the item queue (queue-exact, the thesis' future work), interleaved in one run;
# optionally with larger LMs of our own in place of the model's (timing only: a synthetic LM's scores are not the
# model's). The model (config mokry_decoder.model, as moses_decode.smk's decoding_model): `trained` = the workflow's own
# model (moses_training.smk's tm_model_filtered) on the test books (it tunes nothing), rows raw/mokry_decoder/
# trained.jsonl; `oracle` = the Moses oracle's model on the dev books, rows oracle.jsonl (the committed run's).
# Without the oracle, `oracle` follows the profile's oracle_absent (common.smk: experiment_model). Where the model is
# `trained` and the oracle is present, the oracle's model is an extra table (mokry_table3_4_oracle, the model's own LM
# only; no metrics), as moses_decode.smk's oracle tables. `weights:` adds runs of the trained model under other
# weights (common.smk weight_runs: trained-default, trained-mira ...; rows trained-<w>.jsonl, tables
# mokry_table3_4_trained-<w>; no metrics): Table 3.4's BLEU difference on tuned weights (issue 27).
MOKRY_DECODER = GRID["mokry_decoder"] if "mokry_decoder" in GRID else None  # absent from the grid: not run
MOKRY_DECODER_MODEL = experiment_model("mokry_decoder", MOKRY_DECODER, "the workflow's own model, test books") if MOKRY_DECODER else None
MOKRY_DECODER_ORACLE_TOO = MOKRY_DECODER_MODEL == "trained" and HAVE_ORACLE
MOKRY_DECODER_EXTRA = (["oracle"] if MOKRY_DECODER_ORACLE_TOO else []) + \
    (weight_runs("mokry_decoder", MOKRY_DECODER_MODEL) if MOKRY_DECODER_MODEL else [])  # rows files beside the main one


if MOKRY_DECODER_MODEL:
    ALL += [f"{OUT}/tables/mokry_table3_4.md", f"{OUT}/figures/mokry_fig3_6.png"]
    METRICS.append(f"{OUT}/metrics/mokry_decoder.csv")
    ALL += [f"{OUT}/tables/mokry_table3_4_{x}.md" for x in MOKRY_DECODER_EXTRA]

    rule mokry_decoder_bench:
        conda: CONDA_ENV
        input:
            BUILD,
            _mokry_decoder_lm,
            ini=lambda wildcards: _mokry_decoder_model(wildcards)[0],
            src=lambda wildcards: _mokry_decoder_model(wildcards)[1],
            ref=lambda wildcards: _mokry_decoder_model(wildcards)[2],
        output:
            f"{OUT}/raw/mokry_decoder/{{lm}}.jsonl",  # lm: the model's own (trained|oracle) or a name in lm_models
        wildcard_constraints:  # never the other model's file name
            lm="|".join(re.escape(x) for x in [MOKRY_DECODER_MODEL] + MOKRY_DECODER["lms"] + MOKRY_DECODER_EXTRA),
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            lm=lambda wc: "" if _mokry_decoder_own(wc.lm) else f"--lm {lm_model_path(wc.lm)}",
            queues=MOKRY_DECODER["queue_sizes"],
            exact=MOKRY_DECODER["exact_queue_sizes"],
            sentences=MOKRY_DECODER["sentences"],
            repeats=MOKRY_DECODER["repeats"],
            protocol=protocol_args("mokry_decoder"),  # the grid's repeat protocol with the experiment's own keys
            pop_limit=MOKRY_DECODER["pop_limit"],
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/mokry_decoder/{{lm}}.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench mokry_decoder -f {input.ini} --input {input.src} --reference {input.ref} {params.lm} "
            "--pop-limit {params.pop_limit} -s {params.pop_limit} --queue-sizes {params.queues} "
            "--exact-queue-sizes '{params.exact}' "
            "--sentences {params.sentences} --repeats {params.repeats} {params.protocol} --out {output} 2> {log}"

    rule mokry_decoder_report:
        conda: CONDA_ENV
        input:
            expand(f"{OUT}/raw/mokry_decoder/{{lm}}.jsonl", lm=[MOKRY_DECODER_MODEL] + MOKRY_DECODER["lms"]),
        output:
            shown_all(expand(f"{OUT}/tables/mokry_table3_4.{{ext}}", ext=["csv", "md"]), "mokry_decoder"),
            figure=shown(f"{OUT}/figures/mokry_fig3_6.png", "mokry_decoder"),
            metrics=f"{OUT}/metrics/mokry_decoder.csv",
        params:
            table=lambda wildcards, output: output[0].removesuffix(".csv"),
        log:
            f"{OUT}/logs/mokry_decoder/report.log",
        shell:
            "smtbench report mokry_decoder --rows {input} --table {params.table} "
            "--figure {output.figure} --metrics {output.metrics} 2> {log}"

    if MOKRY_DECODER_EXTRA:
        rule mokry_decoder_extra_report:
            """The oracle's model beside the trained one (its own LM, same settings), or the trained model under
            other weights: Table 3.4 and Fig 3.6 again."""
            conda: CONDA_ENV
            input:
                f"{OUT}/raw/mokry_decoder/{{extra}}.jsonl",
            output:
                shown_all([f"{OUT}/tables/mokry_table3_4_{{extra}}.csv", f"{OUT}/tables/mokry_table3_4_{{extra}}.md"],
                          "mokry_decoder"),
                figure=shown(f"{OUT}/figures/mokry_fig3_6_{{extra}}.png", "mokry_decoder"),
            wildcard_constraints:
                extra="|".join(re.escape(x) for x in MOKRY_DECODER_EXTRA),
            params:
                table=lambda wildcards, output: output[0].removesuffix(".csv"),
            log:
                f"{OUT}/logs/mokry_decoder/report-{{extra}}.log",
            shell:
                "smtbench report mokry_decoder --rows {input} --table {params.table} --figure {output.figure} 2> {log}"
