# Issue 42: counts that do not move with the weather. Fixed named points (hash probe, probing LM, B-tree, and the
# peers: KenLM's hash benchmark with a seed, its probing and trie models) under callgrind with pinned cache geometry
# -> per-unit instructions, data accesses, simulated D1/LL misses and mispredicted branches; the gate fails the run
# on a count that rose more than its tolerance against the committed baseline (wall-time ratios stay in
# `rule regression`, reported, never gating).
COUNTS = GRID["counts"] if "counts" in GRID else None
# valgrind 3.19 stops on AVX-512: a grid whose build is native counts with a portable build of the same sources
# beside it (build/portable, loaded by the driver through SMTBENCH_COUNT_EXT); a portable grid counts its own build
COUNTS_PORTABLE = "build/portable/buildinfo.json" if GRID["native"] else None

if COUNTS and needs_oracle("counts") and COUNTS_PORTABLE:

    rule build_portable:
        """The portable build (SMTBENCH_NATIVE=0) of the extension the counts run, outside the package."""
        conda: CONDA_ENV
        input:
            NATIVE_SOURCES,
        output:
            COUNTS_PORTABLE,
        log:
            "build/portable/build.log",
        shell:
            "SMTBENCH_NATIVE=0 python pylib/smtbench/_build.py --outdir build/portable > {log} 2>&1 "
            "&& cp build/portable/smtbench/_buildinfo.json {output}"

if COUNTS and needs_oracle("counts"):
    ALL += [f"{OUT}/regression/counts.md"]

    rule counts:
        """Every count point under valgrind (about a minute): rows, the per-unit table the gate reads, and each
        point's callgrind file (for `smtbench count --diff`)."""
        conda: CONDA_ENV
        input:
            BUILD,
            portable=COUNTS_PORTABLE or [],
            peer=f"{KENLM_BIN}/kenlm_benchmark",
            hash_peer=f"{KENLM_BIN}/probing_hash_table_benchmark",  # with SEED (tools/kenlm-probing-benchmark.patch v2)
        output:
            rows=f"{OUT}/raw/counts/rows.jsonl",
            table=f"{OUT}/counts/counts.csv",
            callgrind=directory(f"{OUT}/counts/callgrind"),
        params:
            expect_build=expected_build,  # the grid's (portable) build: valgrind 3.19 stops on AVX-512
            points=COUNTS["points"],
            ext="SMTBENCH_COUNT_EXT=$(ls build/portable/smtbench/_native*.so) " if COUNTS_PORTABLE else "",
            oracle=ORACLE,
        log:
            f"{OUT}/logs/counts/counts.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} {params.ext}smtbench count --points {params.points} --oracle {params.oracle} "
            "--workdir work/counts --out {output.rows} --csv {output.table} --callgrind-dir {output.callgrind} "
            "--progress > {log} 2>&1"

    rule counts_check:
        """The gate: one line per count above its baseline by more than its tolerance (on the console), exit 1."""
        conda: CONDA_ENV
        input:
            table=f"{OUT}/counts/counts.csv",
            baseline=COUNTS["baseline"],
        output:
            report=f"{OUT}/regression/counts.md",
            figure=f"{OUT}/regression/regression_counts.png",
        log:
            f"{OUT}/logs/counts/check.log",
        shell:
            "smtbench count --check {input.table} --baseline {input.baseline} --report {output.report} "
            "--figure {output.figure} 2> {log}"
