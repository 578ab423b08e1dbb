# The phrase-based model and its reference normal stack search, checked against the real Moses: the oracle's
# model (../shared/oracles/moses-bible-dev, a Moses-trained model of the shipped corpus) decoded by us, every
# 1-best compared with Moses2's and Moses v1's, every n-best entry rescored by the independent derivation scorer,
# and our words per second beside the oracle's figures.
MD = P.get("moses_decode")
MD_ORACLE = "../shared/oracles/moses-bible-dev"

if MD:
    ALL += [f"{OUT}/tables/moses_decode_normal.md", f"{OUT}/tables/moses_decode_cube.md"]
    METRICS.append(f"{OUT}/metrics/moses_decode.csv")

    rule moses_decode_normal:
        """Normal search, stack MD['stack_size'], on the first MD['sentences'] dev verses (0 = all)."""
        conda: CONDA_ENV
        input:
            BUILD,
            ini=f"{MD_ORACLE}/moses.ini",
            src=f"{MD_ORACLE}/dev.es",
            ref=f"{MD_ORACLE}/dev.en",
        output:
            f"{OUT}/raw/moses_decode/normal.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            stack=MD["stack_size"],
            sentences=MD["sentences"],
            repeats=MD["repeats"],
            outputs=f"{OUT}/raw/moses_decode/normal-outputs",
            oracle=f"{MD_ORACLE}/m2-normal200 {MD_ORACLE}/m1-normal200",
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses_decode/normal.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench decode -f {input.ini} --input {input.src} --reference {input.ref} "
            "--oracle {params.oracle} -s {params.stack} --sentences {params.sentences} --repeats {params.repeats} "
            "--outputs {params.outputs} --out {output} 2> {log}"

    rule moses_decode_cube:
        """Cube pruning at Moses2's oracle setting (pop limit MD['cube']['pop_limit'], -s ...)."""
        conda: CONDA_ENV
        input:
            BUILD,
            ini=f"{MD_ORACLE}/moses.ini",
            src=f"{MD_ORACLE}/dev.es",
            ref=f"{MD_ORACLE}/dev.en",
        output:
            f"{OUT}/raw/moses_decode/cube.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            pop_limit=MD["cube"]["pop_limit"],
            stack=MD["cube"]["stack_size"],
            sentences=MD["sentences"],
            repeats=MD["repeats"],
            outputs=f"{OUT}/raw/moses_decode/cube-outputs",
            oracle=f"{MD_ORACLE}/m2-cube400",
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses_decode/cube.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench decode -f {input.ini} --search cube --pop-limit {params.pop_limit} --input {input.src} "
            "--reference {input.ref} --oracle {params.oracle} -s {params.stack} --sentences {params.sentences} "
            "--repeats {params.repeats} --outputs {params.outputs} --out {output} 2> {log}"

    rule moses_decode_report:
        conda: CONDA_ENV
        input:
            normal=rules.moses_decode_normal.output,
            cube=rules.moses_decode_cube.output,
        output:
            shown_all(expand(f"{OUT}/tables/moses_decode_{{t}}.{{ext}}", t=["normal", "cube"], ext=["csv", "md"]),
                      "moses_decode"),
            metrics=f"{OUT}/metrics/moses_decode.csv",
        params:
            normal=lambda wildcards, output: output[0].removesuffix(".csv"),
            cube=lambda wildcards, output: output[2].removesuffix(".csv"),
        log:
            f"{OUT}/logs/moses_decode/report.log",
        shell:
            "smtbench report moses-decode --rows {input.normal} --table {params.normal} "
            "--cube-rows {input.cube} --cube-table {params.cube} --metrics {output.metrics} 2> {log}"
