# Mediani et al. (2012): parallel external-memory phrase scoring → Tables 1-4 analogues. Two live Moses baselines
# (built by `make moses`), timed in the same run as ours: the core (system `moses`: GNU sort + Moses' `score` x2 +
# `consolidate` on plain files, beside `tm score` on the same files; rule mediani_scoring_bench) and end to end
# (system `moses-e2e`: train-model.perl steps 4-7 from the corpus and alignment below, beside `ours-e2e`: tm extract +
# tm score; rule mediani_e2e_bench, a run of its own: table mediani_e2e); without Moses its rows read "not built
# (make moses)". Table 2 decodes the dev set with Moses' table and with ours.

MEDIANI_SCORING = GRID["mediani_scoring"]
#: the end-to-end systems of config `systems`, timed by a rule of their own (the headline re-measured alone)
MEDIANI_E2E = [x for x in MEDIANI_SCORING["systems"] if x in ("moses-e2e", "ours-e2e")]
MEDIANI_CORE = [x for x in MEDIANI_SCORING["systems"] if x not in MEDIANI_E2E]

ALL += expand(f"{OUT}/tables/mediani_table{{t}}.md", t=[1, 2, 3, 4]) + [
    f"{OUT}/figures/mediani_scaling.png", f"{TM}/phrase-table.gz",
    f"{TM}/dist{MEDIANI_SCORING['workflow_partitions']}/phrase-table.gz"]
METRICS.append(f"{OUT}/metrics/mediani_scoring.csv")
# §3.3's distributed form as workflow jobs (tm_train.smk: tm_partition, tm_score_partition per partition,
# tm_merge_partitions; the SLURM profiles spread the partitions over nodes), checked against the one-job table.
ALL.append(f"{OUT}/tables/mediani_distributed.md")
METRICS.append(f"{OUT}/metrics/mediani_distributed.csv")


rule mediani_scoring_bench:
    """Every (system, corpus fraction, threads, budget) point and the distributed form, repeats interleaved;
    tables are checked against each other and the pandas oracle inside the benchmark."""
    conda: CONDA_ENV
    input:
        BUILD,
        extract=f"{TM}/extract.gz",
        extract_inv=f"{TM}/extract.inv.gz",
        lex=[f"{TM}/lex.f2e", f"{TM}/lex.e2f"],
        src="work/data/train.es",  # Moses' extract runs once on the corpus and is checked against ours; the
        # end-to-end systems start from this corpus and alignment
        tgt="work/data/train.en",
        align=f"{TM}/aligned.grow-diag-final-and",
    output:
        f"{OUT}/raw/mediani_scoring/rows.jsonl",
    params:
        expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
        fractions=",".join(map(str, MEDIANI_SCORING["fractions"])),
        threads=",".join(map(str, MEDIANI_SCORING["threads"])),
        memory=",".join(MEDIANI_SCORING["memory"]),
        systems=",".join(MEDIANI_CORE),
        partitions=",".join(map(str, MEDIANI_SCORING["partitions"])),
        mmax=MEDIANI_SCORING["memory_max_fraction"],
        repeats=MEDIANI_SCORING["repeats"],
        protocol=protocol_args("mediani_scoring"),  # the grid's repeat protocol with the experiment's own keys
        profile=GRID_NAME,
    threads: BENCH_THREADS  # the whole machine (see common.smk)
    resources:
        bench=1,
    log:
        f"{OUT}/logs/mediani_scoring/bench.log",
    shell:
        "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench mediani_scoring --extract {input.extract} --extract-inv {input.extract_inv} "
        "--lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} --workdir work/tm/bench-{params.profile} "
        "--fractions {params.fractions} --threads {params.threads} --memory {params.memory} "
        "--systems {params.systems} --partitions {params.partitions} --memory-max-fraction {params.mmax} "
        "--src {input.src} --tgt {input.tgt} --align {input.align} "
        "--repeats {params.repeats} {params.protocol} --progress --out {output} 2> {log}"


rule mediani_bleu:
    """Table 2: Moses' score/consolidate on the workflow's extract files, then our cube decoder (pop limit 400) on
    the dev set with Moses' table and with ours (same moses.ini otherwise); a Moses row reads "not built" without
    the programs."""
    conda: CONDA_ENV
    input:
        BUILD,
        extract=f"{TM}/extract.gz",
        extract_inv=f"{TM}/extract.inv.gz",
        lex=[f"{TM}/lex.f2e", f"{TM}/lex.e2f"],
        ours=f"{TM}/phrase-table.gz",
        rt=f"{TM}/reordering-table.wbe-msd-bidirectional-fe.gz",
        lm=lm_model_path(MEDIANI_SCORING["bleu_lm"]),
        src="work/data/dev.es",
        ref="work/data/dev.en",
    output:
        f"{OUT}/raw/mediani_scoring/bleu.jsonl",
    params:
        expect_build=expected_build,
        order=LM_MODELS[MEDIANI_SCORING["bleu_lm"]]["order"],
        sentences=MEDIANI_SCORING["bleu_sentences"],
        workdir=f"work/tm/bleu-{GRID_NAME}",
    threads: BENCH_THREADS
    resources:
        bench=1,  # Moses' pipeline and the decoder use the whole machine
    log:
        f"{OUT}/logs/mediani_scoring/bleu.log",
    shell:
        "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench mediani_scoring_bleu --extract {input.extract} "
        "--extract-inv {input.extract_inv} --lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} --ours {input.ours} "
        "--reordering-table {input.rt} --lm {input.lm} --order {params.order} --input {input.src} "
        "--reference {input.ref} --sentences {params.sentences} --pop-limit 400 -s 400 --threads {threads} "
        "--workdir {params.workdir} --out {output} 2> {log}"


rule mediani_reorder_bench:
    """The reordering table alone (issue 43): ours (`tm reorder`) against Moses' lexical-reordering-score on the same
    orientation file of the sweep's extraction, sorted once (train-model.perl's step 7 input); tables compared pair
    by pair inside the benchmark."""
    conda: CONDA_ENV
    input:
        BUILD,
        orientations=f"{TM}/extract.o.gz",
    output:
        f"{OUT}/raw/mediani_scoring/reorder.jsonl",
    params:
        expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
        threads=",".join(map(str, MEDIANI_SCORING["threads"])),
        repeats=MEDIANI_SCORING["repeats"],
        protocol=protocol_args("mediani_scoring"),
        profile=GRID_NAME,
    threads: BENCH_THREADS  # the whole machine (see common.smk)
    resources:
        bench=1,
    log:
        f"{OUT}/logs/mediani_scoring/reorder.log",
    shell:
        "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench mediani_scoring_reorder "
        "--orientations {input.orientations} --workdir work/tm/bench-{params.profile} --threads {params.threads} "
        "--repeats {params.repeats} {params.protocol} --progress --out {output} 2> {log}"


rule mediani_e2e_bench:
    """End to end (issue 43's headline): train-model.perl steps 4-7 (moses-e2e) against tm extract + tm score
    (ours-e2e) from the same corpus and alignment, full corpus, the most threads, repeats interleaved; both pairs of
    tables compared pair by pair inside the benchmark. The sweep's verb with only these two systems."""
    conda: CONDA_ENV
    input:
        BUILD,
        extract=f"{TM}/extract.gz",
        extract_inv=f"{TM}/extract.inv.gz",
        lex=[f"{TM}/lex.f2e", f"{TM}/lex.e2f"],
        src="work/data/train.es",
        tgt="work/data/train.en",
        align=f"{TM}/aligned.grow-diag-final-and",
    output:
        f"{OUT}/raw/mediani_scoring/e2e.jsonl",
    params:
        expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
        threads=",".join(map(str, MEDIANI_SCORING["threads"])),
        systems=",".join(MEDIANI_E2E),  # (the report asks for this rule only where the grid has them)
        repeats=MEDIANI_SCORING["repeats"],
        protocol=protocol_args("mediani_scoring"),
        profile=GRID_NAME,
    threads: BENCH_THREADS  # the whole machine (see common.smk)
    resources:
        bench=1,
    log:
        f"{OUT}/logs/mediani_scoring/e2e.log",
    shell:
        "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench mediani_scoring --extract {input.extract} "
        "--extract-inv {input.extract_inv} --lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} "
        "--workdir work/tm/bench-{params.profile} --fractions 1 --threads {params.threads} --partitions '' "
        "--systems {params.systems} --src {input.src} --tgt {input.tgt} --align {input.align} "
        "--repeats {params.repeats} {params.protocol} --progress --out {output} 2> {log}"


rule mediani_report:
    conda: CONDA_ENV
    input:
        rows=rules.mediani_scoring_bench.output,
        bleu=rules.mediani_bleu.output,
        reorder=rules.mediani_reorder_bench.output,
        e2e=rules.mediani_e2e_bench.output if MEDIANI_E2E else [],
        counts=COUNTS_TABLE,
    output:
        shown_all(expand(f"{OUT}/tables/mediani_table{{t}}.{{ext}}", t=[1, 2, 3, 4], ext=["csv", "md"]), "mediani"),
        shown_all(expand(f"{OUT}/tables/mediani_reorder.{{ext}}", ext=["csv", "md"]), "mediani"),
        shown_all(expand(f"{OUT}/tables/mediani_e2e.{{ext}}", ext=["csv", "md"]), "mediani"),
        figure=shown(f"{OUT}/figures/mediani_scaling.png", "mediani"),
        metrics=f"{OUT}/metrics/mediani_scoring.csv",
    params:
        out=lambda wildcards, output: str(Path(output.metrics).parent.parent),
        e2e=lambda wildcards, input: f"--e2e {input.e2e}" if input.e2e else "",
        counts=counts_option,
    log:
        f"{OUT}/logs/mediani/report.log",
    shell:
        "smtbench report mediani_scoring --rows {input.rows} --bleu {input.bleu} --reorder {input.reorder} "
        "{params.e2e} {params.counts} --outdir {params.out} "
        "--metrics {output.metrics} 2> {log}"


rule mediani_distributed_check:
    """The merged table of the distributed jobs equals tm_score's one-job table byte for byte (decompressed)."""
    conda: CONDA_ENV
    input:
        merged=f"{TM}/dist{MEDIANI_SCORING['workflow_partitions']}/phrase-table.gz",
        single=f"{TM}/phrase-table.gz",
    output:
        table=f"{OUT}/tables/mediani_distributed.md",
        csv=f"{OUT}/tables/mediani_distributed.csv",
        metrics=f"{OUT}/metrics/mediani_distributed.csv",
    params:
        stem=lambda wildcards, output: str(Path(output.table).with_suffix("")),
        key=f"k={MEDIANI_SCORING['workflow_partitions']}",
    log:
        f"{OUT}/logs/mediani/distributed_check.log",
    shell:
        "smtbench report mediani_distributed --pair {params.key} phrase_table {input.merged} "
        "{input.single} --table {params.stem} --metrics {output.metrics} 2> {log}"
