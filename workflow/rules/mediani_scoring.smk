# Mediani et al. (2012): parallel external-memory phrase scoring → Tables 1, 3 and 4 analogues.

MED = P["mediani"]
_TM = TM  # from tm_train.smk (included before this file)

ALL += expand(f"{OUT}/tables/mediani_table{{t}}.md", t=[1, 3, 4]) + [f"{OUT}/figures/mediani_scaling.png",
                                                                   f"{_TM}/phrase-table.gz",
                                                                   f"{_TM}/dist{MED.get('workflow_partitions', 4)}/phrase-table.gz"]
METRICS.append(f"{OUT}/metrics/mediani_scoring.csv")


rule mediani_bench:
    """Every (system, corpus fraction, threads, budget) point and the distributed form, repeats interleaved;
    tables are checked against each other and the pandas oracle inside the benchmark."""
    conda: CONDA_ENV
    input:
        BUILD,
        extract=f"{_TM}/extract.gz",
        extract_inv=f"{_TM}/extract.inv.gz",
        lex=[f"{_TM}/lex.f2e", f"{_TM}/lex.e2f"],
    output:
        f"{OUT}/raw/mediani_scoring/rows.jsonl",
    params:
        expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
        fractions=",".join(map(str, MED["fractions"])),
        threads=",".join(map(str, MED["threads"])),
        memory=",".join(MED["memory"]),
        systems=",".join(MED["systems"]),
        partitions=",".join(map(str, MED["partitions"])),
        mmax=MED.get("memory_max_fraction", 1.0),
        repeats=MED["repeats"],
        protocol=PROTOCOL_ARGS,  # the profile's repeat protocol (smtbench.protocol)
        profile=PROFILE,
    threads: BENCH_THREADS  # the whole machine (see common.smk)
    resources:
        bench=1,
    log:
        f"{OUT}/logs/mediani_scoring/bench.log",
    shell:
        "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench tmscore --extract {input.extract} --extract-inv {input.extract_inv} "
        "--lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} --workdir work/tm/bench-{params.profile} "
        "--fractions {params.fractions} --threads {params.threads} --memory {params.memory} "
        "--systems {params.systems} --partitions {params.partitions} --memory-max-fraction {params.mmax} "
        "--repeats {params.repeats} {params.protocol} --progress --out {output} 2> {log}"


rule mediani_report:
    conda: CONDA_ENV
    input:
        rules.mediani_bench.output,
    output:
        shown_all(expand(f"{OUT}/tables/mediani_table{{t}}.{{ext}}", t=[1, 3, 4], ext=["csv", "md"]), "mediani"),
        figure=shown(f"{OUT}/figures/mediani_scaling.png", "mediani"),
        metrics=f"{OUT}/metrics/mediani_scoring.csv",
    params:
        out=lambda wildcards, output: str(Path(output.metrics).parent.parent),
    log:
        f"{OUT}/logs/mediani/report.log",
    shell:
        "smtbench report mediani --rows {input} --outdir {params.out} --metrics {output.metrics} 2> {log}"
