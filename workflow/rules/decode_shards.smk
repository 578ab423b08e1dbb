# Sharded decoding (issue 29; README "Running on a cluster"): a test set too large for one machine, split into
# `shards` contiguous shards (decode split), each decoded as its own job (any search of `searches`, the workflow's
# trained model filtered to the dev set: moses_training.smk's tm_model_filtered), merged in input order with the
# n-best ids made global (decode merge), and checked byte for byte against one unsharded run of the same decoder
# (report shards: 1-best, scores, n-best). Every shard job is independent: the SLURM profiles spread them over nodes.
# Not a timing experiment (no `bench` resource): the shards run side by side wherever there are cores.
DS = P["decode_shards"] if "decode_shards" in P else None  # absent from the grid: not run
if DS:
    DSD = f"{OUT}/decode_shards"
    DS_INI = f"{TM}/model-dev/moses.ini"
    DS_PARTS = [f"shard{i}" for i in range(DS["shards"])]
    # each search's options: the same for the shards and the one-job run
    DS_ARGS = {
        "normal": f"-s {DS['stack_size']}",
        "cube": f"--pop-limit {DS['pop_limit']} -s {DS['stack_size']}",
        "beam": f"--variant de+ep --beam-limit {DS['stack_size']} --ttable-limit 20",
    }
    ALL.append(f"{OUT}/tables/decode_shards.md")
    METRICS.append(f"{OUT}/metrics/decode_shards.csv")

    rule decode_shards_split:
        conda: CONDA_ENV
        input:
            src="work/data/dev.es",
        output:
            parts=expand(f"{DSD}/input/{{part}}.txt", part=DS_PARTS),
            whole=f"{DSD}/input/whole.txt",
            manifest=f"{DSD}/input/shards.json",
        params:
            outdir=lambda wildcards, output: str(Path(output.manifest).parent),
            shards=DS["shards"],
            sentences=DS["sentences"],
        log:
            f"{OUT}/logs/decode_shards/split.log",
        shell:
            "smtbench decode split -i {input.src} --shards {params.shards} --sentences {params.sentences} "
            "--outdir {params.outdir} 2> {log}"

    rule decode_shard:
        """One shard (or `whole`: the one-job run) decoded by one search: its own job."""
        conda: CONDA_ENV
        input:
            ini=DS_INI,
            src=f"{DSD}/input/{{part}}.txt",
        output:
            out=f"{DSD}/{{search}}/{{part}}.out",
            scores=f"{DSD}/{{search}}/{{part}}.scores",
            nbest=f"{DSD}/{{search}}/{{part}}.nbest",
        wildcard_constraints:
            search="normal|cube|beam",
            part=r"shard\d+|whole",
        params:
            args=lambda wildcards: DS_ARGS[wildcards.search],
            nbest=DS["nbest"],
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
            out=expand(f"{DSD}/{{{{search}}}}/{{part}}.out", part=DS_PARTS),
            scores=expand(f"{DSD}/{{{{search}}}}/{{part}}.scores", part=DS_PARTS),
            nbest=expand(f"{DSD}/{{{{search}}}}/{{part}}.nbest", part=DS_PARTS),
        output:
            out=f"{DSD}/{{search}}/merged.out",
            scores=f"{DSD}/{{search}}/merged.scores",
            nbest=f"{DSD}/{{search}}/merged.nbest",
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
            merged=expand(f"{DSD}/{{search}}/merged.{{ext}}", search=DS["searches"], ext=["out", "scores", "nbest"]),
            whole=expand(f"{DSD}/{{search}}/whole.{{ext}}", search=DS["searches"], ext=["out", "scores", "nbest"]),
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
            "smtbench report shards --experiment decode_shards {params.pairs} --table {params.stem} "
            "--metrics {output.metrics} 2> {log}"
