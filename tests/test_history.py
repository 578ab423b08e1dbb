"""`smtbench report history` (issue 42, 'History a person can read'): one small panel per headline with at most four
series, commit labels thinned, the tables written, the count rows of `smtbench count` drawn beside the ratios."""
from __future__ import annotations

import json
import math
import re
import subprocess

import pandas as pd
import pytest

from smtbench.report import history

KEYS = [f"model=m{i}" for i in range(5)]
METRICS = history.HEADLINES["mokry_lm"][1]


def synthetic(n_commits: int = 30) -> history.History:
    """mokry_lm's two headline metrics over ``n_commits`` commits for five keys (rows, with intervals), two of them
    also in the smoke baseline; counts (ours and a peer) for one headline key and one key no headline has."""
    pts = []
    commits = [(f"{i:07x}abc", f"2026-11-{1 + i // 4:02d}T{i % 24:02d}:00:00+00:00") for i in range(n_commits)]
    for j, (sha, date) in enumerate(commits):
        for m in METRICS:
            for i, k in enumerate(KEYS):
                v = 1.2 + 0.1 * i + 0.02 * math.sin(j)
                pts.append(dict(commit=sha, date=date, source="rows", experiment="mokry_lm", key=k, metric=m, value=v,
                                ci_low=v * 0.95, ci_high=v * 1.05))
                if i < 2 and j % 3 == 0:
                    pts.append(dict(commit=sha, date=date, source="smoke", experiment="mokry_lm", key=k, metric=m,
                                    value=v * 0.9, ci_low=math.nan, ci_high=math.nan))
    p = pd.DataFrame(pts).sort_values(["source", "experiment", "key", "metric", "date"]).reset_index(drop=True)
    p["step"] = history._steps(p)
    counts = pd.DataFrame([dict(commit=sha, date=date, experiment="mokry_lm", key=k, headline="", metric=m, value=v,
                                per="peer")
                           for sha, date in commits[-6:] for k in (KEYS[0], "model=counted-only")
                           for m, v in (("instructions_per_unit", 0.8), ("ll_misses_per_unit", 0.5))],
                          columns=history.COUNT_COLUMNS)
    return history.History(p, [], counts)


def series_per_panel(fig) -> dict[str, int]:
    n: dict[str, int] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if (line.get_gid() or "").startswith("panel"):
                n[line.get_gid()] = n.get(line.get_gid(), 0) + 1
    return n


def test_a_panel_per_headline_with_at_most_four_series_and_thinned_labels(tmp_path):
    h = synthetic(30)
    ps = history.panels(h, "mokry_lm")
    assert len(ps) == len(KEYS) * len(METRICS) + 1  # + the key only counts name
    assert all(len(p.series) <= history.MAX_SERIES for p in ps)
    full = [p for p in ps if p.key == KEYS[0]]
    assert all(p.series == ["rows", "smoke", "instructions_per_unit", "ll_misses_per_unit"] for p in full)
    assert [p.series for p in ps if p.metric == "counts"] == [["instructions_per_unit", "ll_misses_per_unit"]]

    fig = history.figure(h, "mokry_lm")
    drawn = series_per_panel(fig)
    assert len(drawn) == len(ps) and max(drawn.values()) == history.MAX_SERIES
    order = history.commit_order(h, "mokry_lm")
    assert len(order) == 30
    labelled = [[t.get_text() for t in ax.get_xticklabels() if t.get_text()] for ax in fig.axes if ax.get_visible()]
    labelled = [x for x in labelled if x]
    assert labelled, "some panel carries the commit labels"
    for labels in labelled:
        assert 2 <= len(labels) <= history.MAX_LABELS < len(order)  # thinned
        assert labels[0] == history.commit_label(*order[0]) and labels[-1] == history.commit_label(*order[-1])
        assert all(re.fullmatch(r"[0-9a-f]{7} \d\d-\d\d", x) for x in labels)  # short sha + date
    import matplotlib.pyplot as plt
    plt.close(fig)

    figs = history.write(h, tmp_path / "fig", tmp_path / "history")
    assert all(f.exists() for f in figs) and len(figs) == len(history.HEADLINES)
    md = (tmp_path / "history.md").read_text()
    assert "## mokry_lm" in md and all(f"### {m}" in md for m in METRICS) and "### counts" in md
    table = md.split(f"### {METRICS[0]}")[1].split("###")[0]
    header = next(x for x in table.splitlines() if x.startswith("| commit"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["commit", "date", "source", *KEYS]
    assert re.search(r"\| 1\.\d+ \[1\.\d+, 1\.\d+\]", table)  # a ratio [its interval]
    assert len([x for x in table.splitlines() if "| rows " in x]) == 30
    csv = pd.read_csv(tmp_path / "history.csv")
    assert (csv.source == "count").sum() == len(h.counts) and (csv.source == "rows").sum() == 30 * 10


def test_thin_keeps_the_ends_and_at_most_the_limit():
    assert history.thin(5) == [0, 1, 2, 3, 4]
    for n in (9, 27, 100):
        t = history.thin(n)
        assert t[0] == 0 and t[-1] == n - 1 and len(t) == history.MAX_LABELS == len(set(t))


def git(root, *a):
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *a], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_counts_from_git_and_the_working_tree_are_drawn_beside_the_ratios(tmp_path, monkeypatch):
    """Time rows at two commits; count rows (ours and KenLM) committed for the first commit's code and, uncommitted,
    for the second's: both drawn in the model's panels as ours / peer. Count rows in the experiment's raw folder are
    not read as time rows. Without the glob, or with one matching nothing, no counts."""
    from test_protocol import synthetic_lm_rows

    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q")
    raw = tmp_path / "results" / "raw" / "mokry_lm"
    raw.mkdir(parents=True)
    shas = []
    for i in range(2):
        rows = synthetic_lm_rows(4)
        rows["checksum"] = "0x1p+0"
        rows.to_json(raw / "m.jsonl", orient="records", lines=True)
        if i == 1:
            (raw / "count-old.jsonl").write_text(count_rows(shas[0], 400.0, 2.0))
        git(tmp_path, "add", "-A")
        git(tmp_path, "commit", "-q", "-m", f"rows {i}")
        shas.append(git(tmp_path, "rev-parse", "--short=12", "HEAD"))
    (raw / "count-new.jsonl").write_text(count_rows(shas[1] + "-dirty", 380.0, 1.0))

    h = history.collect(tmp_path, counts="results/raw/*/count-*.jsonl")
    assert not h.skipped and set(h.points.commit.str[:7]) == {s[:7] for s in shas}
    c = h.counts
    assert list(c.per) == ["peer"] * 4 and set(c.key) == {"model=m"}
    got = {(sha[:10], m): v for sha, m, v in zip(c.commit, c.metric, c.value)}
    assert got == pytest.approx({(shas[0][:10], "instructions_per_unit"): 400 / 500,
                                 (shas[0][:10], "ll_misses_per_unit"): 2.0 / 4.0,
                                 (shas[1][:10], "instructions_per_unit"): 380 / 500,
                                 (shas[1][:10], "ll_misses_per_unit"): 1.0 / 4.0})
    assert [p.series for p in history.panels(h, "mokry_lm")] == \
        [["rows", "instructions_per_unit", "ll_misses_per_unit"]] * len(METRICS)
    fig = history.figure(h, "mokry_lm")
    assert max(series_per_panel(fig).values()) == 3
    history.write(h, tmp_path / "fig", tmp_path / "hist")
    assert "model=m: instructions / unit (ours/peer)" in (tmp_path / "hist.md").read_text()

    assert history.collect(tmp_path, counts="nothing/*.jsonl").counts.empty
    (raw / "count-new.jsonl").write_text("{not json\n")
    with pytest.raises(history.CountRowsError, match=r"count-new\.jsonl:1: not a JSON row"):
        history.collect(tmp_path, counts="results/raw/*/count-*.jsonl")


def count_rows(sha: str, instr: float, ll: float) -> str:
    return "".join(json.dumps(dict(experiment="mokry_lm", key="model=m", machine_git_sha=sha, side=side,
                                   instructions_per_unit=i, ll_misses_per_unit=m)) + "\n"
                   for side, i, m in (("ours", instr, ll), ("kenlm-probing-cpp", 500.0, 4.0)))


def test_smtbench_count_rows_map_to_their_experiment():
    """`smtbench count`'s rows (experiment "counts", ir/ll_miss per unit) are read under the experiment whose kernel
    they count and the metric names the panels draw."""
    from smtbench.report.history import _count_row
    r = _count_row({"experiment": "counts", "point": "lm-o5-sequential", "system": "ours", "ir_per_unit": 249.5,
                    "ll_miss_per_unit": 1.8, "git_sha": "abc"})
    assert (r["experiment"], r["instructions_per_unit"], r["ll_misses_per_unit"]) == ("mokry_lm", 249.5, 1.8)
    assert _count_row({"experiment": "counts", "point": "hash-kv-1mib-q0"})["experiment"] == "mokry_hash"
    assert _count_row({"experiment": "counts", "point": "btree-o5-k31"})["experiment"] == "glm_btree"
    assert _count_row({"experiment": "mokry_lm", "x": 1}) == {"experiment": "mokry_lm", "x": 1}
