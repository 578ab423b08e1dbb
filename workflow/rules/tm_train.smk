# Translation model from the shipped corpus: eflomal + grow-diag-final-and, Moses extraction, and phrase
# scoring (Mediani §3.1), plus the distributed form (§3.3) as scatter/gather: partition the extract file,
# score each partition with partial counts (independent jobs: the SLURM profile spreads them over nodes),
# then merge the partial counts and re-estimate. Outputs under work/tm/ (gitignored), shared by profiles.
TM = "work/tm"
TM_LEX = [f"{TM}/lex.f2e", f"{TM}/lex.e2f"]
TM_PARTS = GRID["mediani_scoring"]["workflow_partitions"]
# The steps below are `smtbench tm train`'s (one code path for the workflow and a user's one-command training);
# work/data/train.{es,en} is prepared already (data.smk), so tm train's corpus step (tokenize/case/clean) is off.
TM_TRAIN = "smtbench tm train --corpus work/data/train --f es --e en --max-length 0 --ratio 0 --quiet"


rule tm_align:
    conda: CONDA_ENV
    input:
        src="work/data/train.es",
        tgt="work/data/train.en",
    output:
        gdfa=f"{TM}/aligned.grow-diag-final-and",
        fwd=f"{TM}/aligned.fwd",
        rev=f"{TM}/aligned.rev",
    params:
        outdir=lambda wildcards, output: str(Path(output.gdfa).parent),
    log:
        f"{TM}/logs/align.log",
    shell:
        f"{TM_TRAIN} --step align --alignment grow-diag-final-and --outdir {{params.outdir}} > {{log}} 2>&1"


rule tm_extract:
    conda: CONDA_ENV
    input:
        src="work/data/train.es",
        tgt="work/data/train.en",
        align=rules.tm_align.output.gdfa,
    output:
        extract=f"{TM}/extract.gz",
        extract_inv=f"{TM}/extract.inv.gz",
        lex_f2e=f"{TM}/lex.f2e",
        lex_e2f=f"{TM}/lex.e2f",
        orientations=f"{TM}/extract.o.gz",
    params:
        outdir=lambda wildcards, output: str(Path(output.extract).parent),
    log:
        f"{TM}/logs/extract.log",
    shell:
        f"{TM_TRAIN} --step extract --max-phrase-length 7 --outdir {{params.outdir}} > {{log}} 2>&1"


rule tm_reorder:
    """The lexicalized reordering table (wbe-msd-bidirectional-fe, 0.5 smoothing) the decoders use."""
    conda: CONDA_ENV
    input:
        rules.tm_extract.output.orientations,
    output:
        f"{TM}/reordering-table.wbe-msd-bidirectional-fe.gz",
    params:
        outdir=lambda wildcards, output: str(Path(output[0]).parent),
    log:
        f"{TM}/logs/reorder.log",
    shell:
        f"{TM_TRAIN} --step reorder --outdir {{params.outdir}} > {{log}} 2>&1"


rule tm_score:
    """The phrase table the decoders use (unsmoothed relative frequencies)."""
    conda: CONDA_ENV
    input:
        extract=rules.tm_extract.output.extract,
        lex=TM_LEX,
    output:
        f"{TM}/phrase-table.gz",
    params:
        outdir=lambda wildcards, output: str(Path(output[0]).parent),
    threads: workflow.cores
    log:
        f"{TM}/logs/score.log",
    shell:
        f"{TM_TRAIN} --step score --threads {{threads}} --score-memory 256M --outdir {{params.outdir}} > {{log}} 2>&1"


rule tm_score_kn:
    conda: CONDA_ENV
    input:
        extract=rules.tm_extract.output.extract,
        lex=TM_LEX,
    output:
        f"{TM}/phrase-table.kn.gz",
    threads: workflow.cores
    log:
        f"{TM}/logs/score_kn.log",
    shell:
        "smtbench tm score --extract {input.extract} --lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} "
        "--out {output} --threads {threads} --memory 256M --smoothing kn > {log} 2>&1"


checkpoint tm_partition:
    """§3.3 scatter: K partitions of the extract (extraction is per sentence, so this is a corpus split)."""
    conda: CONDA_ENV
    input:
        rules.tm_extract.output.extract,
    output:
        directory(f"{TM}/dist{{k}}/parts"),
    log:
        "work/logs/tm/partition-{k}.log",
    shell:
        "smtbench tm partition --extract {input} --parts {wildcards.k} --outdir {output} 2> {log}"


rule tm_score_partition:
    """One partition, scored independently, keeping its partial counts (one job per partition)."""
    conda: CONDA_ENV
    input:
        part=f"{TM}/dist{{k}}/parts/part{{i}}.extract.gz",
        lex=TM_LEX,
    output:
        f"{TM}/dist{{k}}/part{{i}}.counts.gz",
    threads: 1
    log:
        "work/logs/tm/score-partition-{k}-{i}.log",
    shell:
        "smtbench tm score --counts --extract {input.part} --lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} "
        "--out {output} --threads {threads} --memory 256M 2> {log}"


rule tm_merge_partitions:
    """§3.3 gather: merge the partial counts and re-estimate."""
    conda: CONDA_ENV
    input:
        counts=_tm_partial_counts,
        lex=TM_LEX,
    output:
        f"{TM}/dist{{k}}/phrase-table.gz",
    threads: workflow.cores
    log:
        "work/logs/tm/merge-partitions-{k}.log",
    shell:
        "smtbench tm score --weighted --extract {input.counts} --lex-f2e {input.lex[0]} --lex-e2f {input.lex[1]} "
        "--out {output} --threads {threads} --memory 256M 2> {log}"
