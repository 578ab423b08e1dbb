# Mokry 2016 §3.1: hash-table lookups with a prefetch queue → Table 3.2, Fig 3.2.
MOKRY_HASH = GRID["mokry_hash"]
HASH_ROWS = expand(f"{OUT}/raw/mokry_hash/mib{{mib}}.jsonl", mib=MOKRY_HASH["table_mib"])
HASH_KENLM_MIB = set(MOKRY_HASH["kenlm_peer_mib"])  # sizes at which KenLM's own hash benchmark runs beside

ALL += [f"{OUT}/tables/mokry_table3_2.md", f"{OUT}/figures/mokry_fig3_2.png", f"{OUT}/tables/mokry_hash_layouts.md",
        f"{OUT}/figures/mokry_hash_layouts.png", f"{OUT}/tables/mokry_hash_vs_kenlm.md"]
METRICS.append(f"{OUT}/metrics/mokry_hash.csv")


rule mokry_hash_bench:
    """One table size: every layout variant filled once and held at once, then every (variant, mode, threads, queue
    size) point, repeats interleaved."""
    conda: CONDA_ENV
    input:
        BUILD,
        peer=lambda wildcards: [f"{KENLM_BIN}/probing_hash_table_benchmark"] if int(wildcards.mib) in HASH_KENLM_MIB else [],
    output:
        f"{OUT}/raw/mokry_hash/mib{{mib}}.jsonl",
    params:
        expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
        q=MOKRY_HASH["queue_sizes"],
        variants=lambda wildcards: ",".join(hash_variants(wildcards.mib)),
        threads=",".join(map(str, MOKRY_HASH["threads"])),
        modes=",".join(MOKRY_HASH["modes"]),
        lookups=MOKRY_HASH["lookups"],
        repeats=MOKRY_HASH["repeats"],
        protocol=protocol_args("mokry_hash"),  # the grid's repeat protocol with the experiment's own keys
        lf=MOKRY_HASH["load_factor"],
        sizing=MOKRY_HASH["sizing"],
        kenlm=lambda wildcards: "--kenlm-peer" if int(wildcards.mib) in HASH_KENLM_MIB else "",
    threads: BENCH_THREADS  # the whole machine (see common.smk)
    resources:
        bench=1,
        mem_mb=lambda wc: int(wc.mib) * len(hash_variants(wc.mib)) + 512 + (int(wc.mib) // 2 if int(wc.mib) in HASH_KENLM_MIB else 0),
    log:
        f"{OUT}/logs/mokry_hash/mib{{mib}}.log",
    shell:
        "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench guard --what 'hash sweep of a {wildcards.mib} MiB table' -- "
        "smtbench bench mokry_hash --table-mib {wildcards.mib} --variants {params.variants} --queue-sizes {params.q} --threads {params.threads} "
        "--mode {params.modes} --lookups {params.lookups} --repeats {params.repeats} {params.protocol} "
        "--load-factor {params.lf} --sizing {params.sizing} {params.kenlm} --progress --out {output} 2> {log}"


rule mokry_hash_report:
    conda: CONDA_ENV
    input:
        rows=HASH_ROWS,
        counts=COUNTS_TABLE,
    output:
        table=f"{OUT}/tables/mokry_table3_2.md",
        csv=shown(f"{OUT}/tables/mokry_table3_2.csv", "mokry_hash"),
        figure=shown(f"{OUT}/figures/mokry_fig3_2.png", "mokry_hash"),
        layouts=f"{OUT}/tables/mokry_hash_layouts.md",
        layouts_csv=shown(f"{OUT}/tables/mokry_hash_layouts.csv", "mokry_hash"),
        layouts_figure=shown(f"{OUT}/figures/mokry_hash_layouts.png", "mokry_hash"),
        vs_kenlm=f"{OUT}/tables/mokry_hash_vs_kenlm.md",
        vs_kenlm_csv=shown(f"{OUT}/tables/mokry_hash_vs_kenlm.csv", "mokry_hash"),
        metrics=f"{OUT}/metrics/mokry_hash.csv",
    params:
        table=lambda wildcards, output: output.csv.removesuffix(".csv"),
        layouts=lambda wildcards, output: output.layouts_csv.removesuffix(".csv"),
        vs_kenlm=lambda wildcards, output: output.vs_kenlm_csv.removesuffix(".csv"),
        counts=counts_option,
    log:
        f"{OUT}/logs/mokry_hash/report.log",
    shell:
        "smtbench report mokry_hash --rows {input.rows} {params.counts} --table {params.table} "
        "--figure {output.figure} --layouts-table {params.layouts} --layouts-figure {output.layouts_figure} "
        "--vs-kenlm-table {params.vs_kenlm} "
        "--metrics {output.metrics} 2> {log}"
