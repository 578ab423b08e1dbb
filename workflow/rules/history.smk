# History (issues 23, 42): every headline ratio over the commits that changed the committed rows (results/raw/) and the
# smoke baseline, with its 95% interval, one small panel per headline; steps beyond the intervals flagged; the counts
# of `smtbench count` (HISTORY_COUNTS: none there, none drawn) beside them (`smtbench report history`). It reads git,
# not the workflow's outputs: after new commits, `snakemake --forcerun report_history` redraws it.
HISTORY_EXPERIMENTS = ["mokry_lm", "glm_btree", "mokry_hash", "mediani_scoring", "mokry_decoder"]
HISTORY_FIGURES = [f"{OUT}/figures/history_{e}.png" for e in HISTORY_EXPERIMENTS]
HISTORY_COUNTS = f"{OUT}/raw/counts/*.jsonl"  # the count rows, now and as committed
ALL += HISTORY_FIGURES + [f"{OUT}/tables/history.md"]


rule report_history:
    """Headline ratios over the commits (the repository's git history); one figure per experiment."""
    conda: CONDA_ENV
    output:
        figures=[shown(f, "history") for f in HISTORY_FIGURES],
        table=f"{OUT}/tables/history.md",
        csv=shown(f"{OUT}/tables/history.csv", "history"),
    params:
        figures=lambda wildcards, output: str(Path(output.table).parent.parent / "figures"),
        table=lambda wildcards, output: output.csv.removesuffix(".csv"),
        counts=HISTORY_COUNTS,
    log:
        f"{OUT}/logs/report_history.log",
    shell:
        "smtbench report history --repo . --figures {params.figures} --table {params.table} --counts '{params.counts}' "
        "2> {log}"
