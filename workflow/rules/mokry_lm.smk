# Mokry 2016 §3.2: LM scoring with the automaton queue -> Table 3.3, Fig 3.5.
# Models are the estimator's outputs work/lm/{name}.arpa.gz; names come from mokry_lm.models, or,
# when that is absent, from the profile's lm_models (owned by the estimator's rules).
MOKRY_LM = GRID["mokry_lm"] if "mokry_lm" in GRID else None  # absent from the grid: not run


LM_BENCH_MODELS = _mokry_lm_models() if MOKRY_LM else []
LM_ROWS = expand(f"{OUT}/raw/mokry_lm/{{name}}.jsonl", name=LM_BENCH_MODELS)

if LM_BENCH_MODELS:
    ALL += [f"{OUT}/tables/mokry_table3_3.md", f"{OUT}/figures/mokry_fig3_5.png"]
    METRICS.append(f"{OUT}/metrics/mokry_lm.csv")


if MOKRY_LM:

    rule mokry_lm_bench:
        """One model: sequential path, automaton queue sizes and KenLM's C++ probing and trie models (kenlm_benchmark
        -t 1), repeats interleaved; kenlm module row last."""
        conda: CONDA_ENV
        input:
            BUILD,
            unpack(_mokry_lm_peers),
            arpa="work/lm/{name}.arpa.gz",
            text=MOKRY_LM["text"],
        output:
            f"{OUT}/raw/mokry_lm/{{name}}.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            protocol=protocol_args("mokry_lm"),  # the grid's repeat protocol with the experiment's own keys
            q=MOKRY_LM["queue_sizes"],
            repeats=MOKRY_LM["repeats"],
            minq=MOKRY_LM["min_queries"],
            kenlm="" if MOKRY_LM["kenlm"] else "--no-kenlm",
            backends="--backends " + ",".join(MOKRY_LM["backends"]),
            peers=lambda wc, input: " ".join(f"--kenlm-binary {k}={input[k]}" for k in ("probing", "trie")
                                             if k in input.keys()),
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
            mem_mb=lambda wc, input: int(input.size_mb * 8) + 1024,
        log:
            f"{OUT}/logs/mokry_lm/{{name}}.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench guard --what 'LM scoring sweep of {wildcards.name}' -- "
            "smtbench bench mokry_lm --arpa {input.arpa} --text {input.text} --name {wildcards.name} "
            "--queue-sizes {params.q} --repeats {params.repeats} {params.protocol} --min-queries {params.minq} {params.kenlm} {params.peers} "
            "{params.backends} "
            "--progress --out {output} 2> {log}"


    rule mokry_lm_report:
        conda: CONDA_ENV
        input:
            rows=LM_ROWS,
            counts=COUNTS_TABLE,
        output:
            table=f"{OUT}/tables/mokry_table3_3.md",
            csv=shown(f"{OUT}/tables/mokry_table3_3.csv", "mokry_lm"),
            figure=shown(f"{OUT}/figures/mokry_fig3_5.png", "mokry_lm"),
            metrics=f"{OUT}/metrics/mokry_lm.csv",
        params:
            table=lambda wildcards, output: output.csv.removesuffix(".csv"),
            counts=counts_option,
        log:
            f"{OUT}/logs/mokry_lm/report.log",
        shell:
            "smtbench report mokry_lm --rows {input.rows} {params.counts} --table {params.table} --figure {output.figure} "
            "--metrics {output.metrics} 2> {log}"
