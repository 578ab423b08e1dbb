# Sharded decoding (issue 29; README "Running on a cluster"): a test set too large for one machine, split into
# `shards` contiguous shards (decode split), each decoded as its own job (any search of `searches`, the workflow's
# trained model filtered to the dev set: moses_training.smk's tm_model_filtered), merged in input order with the
# n-best ids made global (decode merge), and checked byte for byte against one unsharded run of the same decoder
# (report decode_shards: 1-best, scores, n-best). Every shard job is independent: the SLURM profiles spread them over nodes.
# Not a timing experiment (no `bench` resource): the shards run side by side wherever there are cores.
DECODE_SHARDS = GRID["decode_shards"] if "decode_shards" in GRID else None  # absent from the grid: not run
if DECODE_SHARDS:
    DECODE_SHARDS_DIR = f"{OUT}/decode_shards"
    DECODE_SHARDS_INI = f"{TM}/model-dev/moses.ini"
    DECODE_SHARDS_PARTS = [f"shard{i}" for i in range(DECODE_SHARDS["shards"])]
    # each search's options: the same for the shards and the one-job run
    DECODE_SHARDS_ARGS = {
        "normal": f"-s {DECODE_SHARDS['stack_size']}",
        "cube": f"--pop-limit {DECODE_SHARDS['pop_limit']} -s {DECODE_SHARDS['stack_size']}",
        "beam": f"--variant de+ep --beam-limit {DECODE_SHARDS['stack_size']} --ttable-limit 20",
    }
    ALL.append(f"{OUT}/tables/decode_shards.md")
    METRICS.append(f"{OUT}/metrics/decode_shards.csv")

    rule decode_shards_split:
        conda: CONDA_ENV
        input:
            src="work/data/dev.es",
        output:
            parts=expand(f"{DECODE_SHARDS_DIR}/input/{{part}}.txt", part=DECODE_SHARDS_PARTS),
            whole=f"{DECODE_SHARDS_DIR}/input/whole.txt",
            manifest=f"{DECODE_SHARDS_DIR}/input/shards.json",
        params:
            outdir=lambda wildcards, output: str(Path(output.manifest).parent),
            shards=DECODE_SHARDS["shards"],
            sentences=DECODE_SHARDS["sentences"],
        log:
            f"{OUT}/logs/decode_shards/split.log",
        shell:
            "smtbench decode split -i {input.src} --shards {params.shards} --sentences {params.sentences} "
            "--outdir {params.outdir} 2> {log}"

    rule decode_shard:
        """One shard (or `whole`: the one-job run) decoded by one search: its own job."""
        conda: CONDA_ENV
        input:
            ini=DECODE_SHARDS_INI,
            src=f"{DECODE_SHARDS_DIR}/input/{{part}}.txt",
        output:
            out=f"{DECODE_SHARDS_DIR}/{{search}}/{{part}}.out",
            scores=f"{DECODE_SHARDS_DIR}/{{search}}/{{part}}.scores",
            nbest=f"{DECODE_SHARDS_DIR}/{{search}}/{{part}}.nbest",
        wildcard_constraints:
            search="normal|cube|beam",
            part=r"shard\d+|whole",
        params:
            args=lambda wildcards: DECODE_SHARDS_ARGS[wildcards.search],
            nbest=DECODE_SHARDS["nbest"],
        threads: 1
        log:
            f"{OUT}/logs/decode_shards/{{search}}-{{part}}.log",
        shell:
            "smtbench decode {wildcards.search} {params.args} -f {input.ini} -i {input.src} -o {output.out} "
            "--scores {output.scores} --n-best {output.nbest} {params.nbest} --no-progress 2> {log}"

    rule decode_shards_merge:
        conda: CONDA_ENV
        input:
            manifest=rules.decode_shards_split.output.manifest,
            out=expand(f"{DECODE_SHARDS_DIR}/{{{{search}}}}/{{part}}.out", part=DECODE_SHARDS_PARTS),
            scores=expand(f"{DECODE_SHARDS_DIR}/{{{{search}}}}/{{part}}.scores", part=DECODE_SHARDS_PARTS),
            nbest=expand(f"{DECODE_SHARDS_DIR}/{{{{search}}}}/{{part}}.nbest", part=DECODE_SHARDS_PARTS),
        output:
            out=f"{DECODE_SHARDS_DIR}/{{search}}/merged.out",
            scores=f"{DECODE_SHARDS_DIR}/{{search}}/merged.scores",
            nbest=f"{DECODE_SHARDS_DIR}/{{search}}/merged.nbest",
        wildcard_constraints:
            search="normal|cube|beam",
        log:
            f"{OUT}/logs/decode_shards/{{search}}-merge.log",
        shell:
            "smtbench decode merge --manifest {input.manifest} --outputs {input.out} -o {output.out} "
            "--scores-parts {input.scores} --scores {output.scores} --n-best-parts {input.nbest} "
            "--n-best {output.nbest} 2> {log}"

    rule decode_shards_check:
        """Every search's merged 1-best, scores and n-best against its one-job run, byte for byte."""
        conda: CONDA_ENV
        input:
            merged=expand(f"{DECODE_SHARDS_DIR}/{{search}}/merged.{{ext}}", search=DECODE_SHARDS["searches"], ext=["out", "scores", "nbest"]),
            whole=expand(f"{DECODE_SHARDS_DIR}/{{search}}/whole.{{ext}}", search=DECODE_SHARDS["searches"], ext=["out", "scores", "nbest"]),
        output:
            table=f"{OUT}/tables/decode_shards.md",
            csv=f"{OUT}/tables/decode_shards.csv",
            metrics=f"{OUT}/metrics/decode_shards.csv",
        params:
            stem=lambda wildcards, output: str(Path(output.table).with_suffix("")),
            pairs=lambda wildcards, input: " ".join(
                f"--pair search={Path(m).parent.name} {Path(m).suffix[1:]} {m} {w}"
                for m, w in zip(input.merged, input.whole)),
        log:
            f"{OUT}/logs/decode_shards/check.log",
        shell:
            "smtbench report decode_shards {params.pairs} --table {params.stem} "
            "--metrics {output.metrics} 2> {log}"
