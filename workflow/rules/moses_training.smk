# Training fidelity and the end-to-end model (the phrase-based model issue):
#  1. from the oracle's own symmetrised alignment, our extraction, phrase scoring and reordering scoring, filtered
#     to the dev books as Moses' filter-model-given-input.pl does, against Moses' own dev-filtered tables;
#  2. a full Moses-style model our pipeline trains end to end (eflomal alignment, our tables, our 5-gram LM) in
#     work/tm/model, decoded on the dev books by the normal search, BLEU beside the oracle model's.
MOSES_TRAINING = GRID["moses_training"] if "moses_training" in GRID else None  # absent from the grid: not run
TM_ORACLE = "work/tm-oracle"

# Our tables from the oracle's alignment: defined in every profile (rules run only when something asks for them:
# moses_training below, moore_quirk.smk's paper-faithful model).
rule tm_oracle_extract:
    conda: CONDA_ENV
    input:
        src=f"{ORACLE}/train.es.xz",
        tgt=f"{ORACLE}/train.en.xz",
        align=f"{ORACLE}/train.aligned.grow-diag-final-and.xz",
    output:
        f"{TM_ORACLE}/extract.gz",
        f"{TM_ORACLE}/extract.inv.gz",
        f"{TM_ORACLE}/extract.o.gz",
        lex=[f"{TM_ORACLE}/lex.f2e", f"{TM_ORACLE}/lex.e2f"],
    params:
        tmo=lambda wildcards, output: str(Path(output.lex[0]).parent),
    log:
        f"{TM_ORACLE}/logs/extract.log",
    shell:
        "smtbench tm extract --src {input.src} --tgt {input.tgt} --align {input.align} --outdir {params.tmo} "
        "--max-length 7 --orientation > {log} 2>&1"


rule tm_oracle_tables:
    conda: CONDA_ENV
    input:
        extract=f"{TM_ORACLE}/extract.gz",
        orientations=f"{TM_ORACLE}/extract.o.gz",
        lex=[f"{TM_ORACLE}/lex.f2e", f"{TM_ORACLE}/lex.e2f"],
        dev=f"{ORACLE}/dev.es",
    output:
        pt=f"{TM_ORACLE}/phrase-table.gz",
        rt=f"{TM_ORACLE}/reordering-table.wbe-msd-bidirectional-fe.gz",
        fpt=f"{TM_ORACLE}/dev/phrase-table.gz",
        frt=f"{TM_ORACLE}/dev/reordering-table.wbe-msd-bidirectional-fe.gz",
    params:
        dev=lambda wildcards, output: str(Path(output.fpt).parent),
    threads: workflow.cores
    log:
        f"{TM_ORACLE}/logs/tables.log",
    shell:
        "(smtbench tm score --extract {input.extract} --lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} "
        "--out {output.pt} --threads {threads} --memory 256M "
        "&& smtbench tm reorder --orientations {input.orientations} --out {output.rt} "
        "&& smtbench tm filter --input {input.dev} --table {output.pt} {output.rt} --outdir {params.dev}) > {log} 2>&1"


# Our end-to-end model (our alignment, tables, reordering and LM; `tm model`'s moses.ini), and the same filtered to a
# split's source as Moses' filter-model-given-input.pl does: the model every decoding experiment runs on where it
# does not ask for the oracle's (moses_decode.smk), decoded by Moses2 / Moses too. Defined in every profile; built
# only when something asks for it. Its LM: config `moses_training.lm`, else (profiles without moses_training)
# `moses2_moses1.lm`, else bible.o5.
# the LM of the workflow's trained model: moses_training's, else moses2_moses1's
_TRAINED_LM_FROM = next((k for k in ("moses_training", "moses2_moses1") if k in GRID), None)
if _TRAINED_LM_FROM is None:
    raise ValueError("config: the trained model's LM is moses_training.lm (or moses2_moses1.lm): the grid has neither")
TRAINED_LM = GRID[_TRAINED_LM_FROM]["lm"]


rule tm_model:
    conda: CONDA_ENV
    input:
        pt=f"{TM}/phrase-table.gz",
        rt=rules.tm_reorder.output,
        lm=lm_model_path(TRAINED_LM),
    output:
        ini=f"{TM}/model/moses.ini",
    params:
        tm=lambda wildcards, input: str(Path(input.pt).parent),
        outdir=lambda wildcards, output: str(Path(output.ini).parent),
    log:
        f"{TM}/logs/model.log",
    shell:  # tm train's model step (tm.model.make_model, as `tm model`); the LM's order is read from its header
        f"{TM_TRAIN} --step model --lm {{input.lm}} --outdir {{params.tm}} --model-dir {{params.outdir}} > {{log}} 2>&1"


rule tm_model_filtered:
    """The model filtered to work/data/{split}.es (dev or test)."""
    conda: CONDA_ENV
    input:
        ini=rules.tm_model.output.ini,
        src="work/data/{split}.es",
        lm=lm_model_path(TRAINED_LM),
    output:
        ini=f"{TM}/model-{{split}}/moses.ini",
    wildcard_constraints:
        split="dev|test",
    params:
        model=lambda wildcards, input: str(Path(input.ini).parent),
        outdir=lambda wildcards, output: str(Path(output.ini).parent),
        order=LM_MODELS[TRAINED_LM]["order"],
    log:
        f"{TM}/logs/model-{{split}}.log",
    shell:
        "(smtbench tm filter --input {input.src} --table {params.model}/phrase-table.gz "
        "{params.model}/reordering-table.wbe-msd-bidirectional-fe.gz --outdir {params.outdir}/tables "
        "&& smtbench tm model --phrase-table {params.outdir}/tables/phrase-table.gz "
        "--reordering-table {params.outdir}/tables/reordering-table.wbe-msd-bidirectional-fe.gz "
        "--lm {input.lm} --order {params.order} --outdir {params.outdir}) > {log} 2>&1"


if MOSES_TRAINING and needs_oracle("moses_training"):
    ALL += [f"{OUT}/tables/moses_training.md"]
    METRICS.append(f"{OUT}/metrics/moses_training.csv")

    rule moses_training_fidelity:
        conda: CONDA_ENV
        input:
            BUILD,  # the tables come from this checkout's C scorer: redone after every native build
            pt=rules.tm_oracle_tables.output.fpt,
            rt=rules.tm_oracle_tables.output.frt,
            moses_pt=f"{ORACLE}/phrase-table.dev.gz",
            moses_rt=f"{ORACLE}/reordering-table.dev.gz",
        output:
            f"{OUT}/raw/moses_training/fidelity.json",
        log:
            f"{OUT}/logs/moses_training/fidelity.log",
        shell:
            "smtbench tm fidelity --phrase-table {input.pt} {input.moses_pt} "
            "--reordering-table {input.rt} {input.moses_rt} --out {output} > /dev/null 2> {log}"

    rule moses_training_decode:
        conda: CONDA_ENV
        input:
            BUILD,
            ini=f"{TM}/model-dev/moses.ini",
            src="work/data/dev.es",
            ref="work/data/dev.en",
        output:
            f"{OUT}/raw/moses_training/decode-ours.jsonl",
        params:
            expect_build=expected_build,  # the build a measurement must have loaded (SMTBENCH_EXPECT_BUILD)
            stack=MOSES_TRAINING["stack_size"],
            sentences=MOSES_TRAINING["sentences"],
            outputs=f"{OUT}/raw/moses_training/decode-ours-outputs",
        threads: BENCH_THREADS  # the whole machine (see common.smk)
        resources:
            bench=1,
        log:
            f"{OUT}/logs/moses_training/decode.log",
        shell:
            "SMTBENCH_EXPECT_BUILD={params.expect_build} smtbench bench moses_decode -f {input.ini} --input {input.src} --reference {input.ref} -s {params.stack} "
            "--sentences {params.sentences} --repeats 1 --nbest 2 --outputs {params.outputs} --out {output} 2> {log}"

    rule moses_training_report:
        conda: CONDA_ENV
        input:
            fidelity=rules.moses_training_fidelity.output,
            ours=rules.moses_training_decode.output,
            oracle=f"{OUT}/raw/moses_decode/normal-oracle.jsonl" if MOSES_DECODE_MODEL == "trained" else f"{OUT}/raw/moses_decode/normal.jsonl",
        output:
            shown_all(expand(f"{OUT}/tables/moses_training.{{ext}}", ext=["csv", "md"]), "moses_training"),
            metrics=f"{OUT}/metrics/moses_training.csv",
        params:
            table=lambda wildcards, output: output[0].removesuffix(".csv"),
        log:
            f"{OUT}/logs/moses_training/report.log",
        shell:
            "smtbench report moses_training --fidelity {input.fidelity} --ours {input.ours} --oracle {input.oracle} "
            "--table {params.table} --metrics {output.metrics} 2> {log}"
