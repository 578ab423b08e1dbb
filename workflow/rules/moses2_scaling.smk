# The Moses2 paper ("Fast, scalable phrase-based decoding") sections 4.1 and 4.3-4.5: sentence-level threads, memory
# pools, the binarized phrase table (static cache, compression, reordering integrated or separate), the component
# profile. The model (config moses2_scaling.model, as moses_decode.smk's decoding_model): `trained` = the workflow's own
# model (tm_model_filtered) on the test books (nothing is tuned); `oracle` = the Moses oracle's model on the dev
# verses (the committed run's). Binarized (`table`): the model's full table (trained: the workflow's; oracle: our
# pipeline's from the oracle's alignment, moses_training.smk's tm_oracle_tables) or its table filtered to the decoded
# books (`dev`; for CI). Moses2 (config `peers`) is timed live in the same sweep at every thread count (-threads N,
# the same ini, input, pop limit and -s; loading subtracted alike, beside ours as a process on the same model) and
# its peak RSS measured: Fig 3 and the acceptance figures divide by it (issue 40). The oracle's recorded m2-cube400
# run and runs-quiet.tsv (oracle model only) stay beside it, labelled "recorded", with no ratio. Without the oracle,
# `oracle` follows the profile's oracle_absent (common.smk).
MOSES2_SCALING = GRID["moses2_scaling"] if "moses2_scaling" in GRID else None  # absent from the grid: not run
MOSES2_SCALING_TABLES = ["plain-int", "comp-int", "plain-sep", "comp-sep"]
MOSES2_SCALING_MODEL = experiment_model("moses2_scaling", MOSES2_SCALING, "the workflow's own model, test books") if MOSES2_SCALING else None

if MOSES2_SCALING_MODEL:
    ALL += [f"{OUT}/tables/moses2_scaling_acceptance.md", f"{OUT}/figures/moses2_fig9.png"]
    METRICS.append(f"{OUT}/metrics/moses2_scaling.csv")
    MOSES2_SCALING_INI, MOSES2_SCALING_SRC, MOSES2_SCALING_REF = decoding_model(MOSES2_SCALING_MODEL)
    # the binarized tables' sources (work/moses2_scaling/<source>/): the oracle's model's full table (ours from its
    # alignment) and its dev-filtered table; the trained model's full table and its test-filtered one (the tables
    # tm_model_filtered writes beside its moses.ini, made by that rule)
    MOSES2_SCALING_SOURCES = {
        "full": (f"{TM_ORACLE}/phrase-table.gz", f"{TM_ORACLE}/reordering-table.wbe-msd-bidirectional-fe.gz"),
        "dev": (f"{ORACLE}/phrase-table.dev.gz", f"{ORACLE}/reordering-table.dev.gz"),
        "trained-full": (f"{TM}/phrase-table.gz", f"{TM}/reordering-table.wbe-msd-bidirectional-fe.gz"),
        "trained-dev": (str(Path(decoding_model("trained")[0]).parent / "phrase-table.gz"),
                        str(Path(decoding_model("trained")[0]).parent / "reordering-table.wbe-msd-bidirectional-fe.gz")),
    }
    MOSES2_SCALING_DEPS = {"trained-dev": [decoding_model("trained")[0]]}  # files no rule names: their rule's output instead
    MOSES2_SCALING_KEY = "" if MOSES2_SCALING_MODEL == "oracle" else "trained-"
    # text tables with the binarized tables' numbers (every timed point must reproduce their decoding exactly): the
    # oracle model's full table filtered to the dev verses, or its own dev tables; the trained model's ini tables
    # (filtered from the full table: the same numbers)
    MOSES2_SCALING_SAME = {"full": (f"{TM_ORACLE}/dev/phrase-table.gz", f"{TM_ORACLE}/dev/reordering-table.wbe-msd-bidirectional-fe.gz"),
                "dev": (f"{ORACLE}/phrase-table.dev.gz", f"{ORACLE}/reordering-table.dev.gz")}[MOSES2_SCALING["table"]] \
        if MOSES2_SCALING_MODEL == "oracle" else ()

    rule moses2_scaling_binarize:
        """One binarized table per source (MOSES2_SCALING_SOURCES) and storage: {plain,comp} target side x reordering {int,sep}."""
        conda: CONDA_ENV
        input:
            BUILD,  # the file format is this checkout's C
            tables=lambda wildcards: MOSES2_SCALING_DEPS.get(wildcards.source, MOSES2_SCALING_SOURCES[wildcards.source]),
        output:
            "work/moses2_scaling/{source}/{variant}.bin",
        wildcard_constraints:
            source="full|dev|trained-full|trained-dev",
            variant="(plain|comp)-(int|sep)",
        params:
            pt=lambda wildcards: MOSES2_SCALING_SOURCES[wildcards.source][0],
            rt=lambda wildcards: MOSES2_SCALING_SOURCES[wildcards.source][1],
            compress=lambda wildcards: "--no-compress" if wildcards.variant.startswith("plain") else "",
            ro=lambda wildcards: "integrated" if wildcards.variant.endswith("int") else "separate",
        log:
            f"{OUT}/logs/moses2_scaling/binarize-{{source}}-{{variant}}.log",
        shell:
            "smtbench tm binarize --phrase-table {params.pt} --reordering-table {params.rt} --reordering {params.ro} "
            "{params.compress} --out {output} > {log} 2>&1"

    rule moses2_scaling_bench:
        conda: CONDA_ENV
        input:
            BUILD,
            ini=MOSES2_SCALING_INI,
            src=MOSES2_SCALING_SRC,
            ref=MOSES2_SCALING_REF,
            tables=expand(f"work/moses2_scaling/{MOSES2_SCALING_KEY}{MOSES2_SCALING['table']}/{{v}}.bin", v=MOSES2_SCALING_TABLES),
            same=f"work/moses2_scaling/{MOSES2_SCALING_KEY}dev/plain-int.bin",  # peak RSS on exactly the ini's (filtered) model
            same_tables=list(MOSES2_SCALING_SAME),
        output:
            f"{OUT}/raw/moses2_scaling/rows.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            oracle=f"--oracle {ORACLE}/m2-cube400" if MOSES2_SCALING_MODEL == "oracle" else "",  # Moses2's recorded run
            same_tables=lambda wildcards, input: f"--same-tables {input.same_tables[0]} {input.same_tables[1]}"
            if input.same_tables else "",
            # the text tables the binaries were built from where the ini names others (the oracle's full table)
            table_source="" if MOSES2_SCALING["table"] == "dev" else "--table-source {} {}".format(
                *MOSES2_SCALING_SOURCES[f"{MOSES2_SCALING_KEY}full"]),
            tables=lambda wildcards, input: " ".join(f"--table {v} {p}" for v, p in zip(MOSES2_SCALING_TABLES, input.tables)),
            threads=",".join(map(str, MOSES2_SCALING["threads"])),
            caches=",".join(map(str, MOSES2_SCALING["caches"])),
            cache=MOSES2_SCALING["cache"],
            pop_limit=MOSES2_SCALING["pop_limit"],
            stack=MOSES2_SCALING["stack_size"],
            sentences=MOSES2_SCALING["sentences"],
            repeats=MOSES2_SCALING["repeats"],
            protocol=protocol_args("moses2_scaling"),  # the grid's repeat protocol with the experiment's own keys
            profile_us=MOSES2_SCALING["profile_us"],
            peers=f"--peers {','.join(MOSES2_SCALING['peers'])}" if MOSES2_SCALING["peers"] else "",  # Moses2 live
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses2_scaling/bench.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses2_scaling -f {input.ini} --input {input.src} "
            "--reference {input.ref} {params.oracle} {params.tables} --threads {params.threads} "
            "--caches {params.caches} --cache {params.cache} --pop-limit {params.pop_limit} -s {params.stack} "
            "--sentences {params.sentences} --repeats {params.repeats} {params.protocol} --profile-us {params.profile_us} --rss "
            "--rss-same-model {input.same} {params.same_tables} {params.table_source} {params.peers} "
            "--out {output} 2> {log}"

    rule moses2_scaling_report:
        conda: CONDA_ENV
        input:
            rows=rules.moses2_scaling_bench.output,
            quiet=f"{ORACLE}/runs-quiet.tsv" if MOSES2_SCALING_MODEL == "oracle" else [],  # Moses2's timings: oracle model only
            # the lent device's sweep (tools/device-rows.sh --import; issue 43): committed where a session was lent one
            device=[p for p in [f"{OUT}/raw/moses2_scaling/device.jsonl"] if Path(p).is_file()],
        output:
            shown_all(expand(f"{OUT}/tables/moses2_{{t}}.{{ext}}",
                             t=["table3", "table6", "table7", "fig3", "fig8", "fig9", "scaling_acceptance",
                                "device_threads"],
                             ext=["csv", "md"]), "moses2_scaling"),
            shown_all(expand(f"{OUT}/figures/moses2_fig{{f}}.png", f=[3, 8, 9]), "moses2_scaling"),
            metrics=f"{OUT}/metrics/moses2_scaling.csv",
        params:
            tables=lambda wildcards, output: str(Path(output.metrics).parent.parent / "tables"),
            figures=lambda wildcards, output: str(Path(output.metrics).parent.parent / "figures"),
            oracle=lambda wildcards, input: f"--oracle {Path(input.quiet).parent}" if input.quiet else "",
            device=lambda wildcards, input: f"--device-rows {input.device}" if input.device else "",
        log:
            f"{OUT}/logs/moses2_scaling/report.log",
        shell:
            "smtbench report moses2_scaling --rows {input.rows} {params.oracle} --tables {params.tables} "
            "--figures {params.figures} {params.device} --metrics {output.metrics} 2> {log}"
