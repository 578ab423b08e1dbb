"""`smtbench report history`: each headline ratio over the commits that changed it (airspeed velocity's idea, computed
from our own committed rows).

For every commit that changed ``results/raw/<experiment>/`` the experiment's rows as committed there are read back
from git and turned into the same ratio metrics (with their 95% intervals where the rows carry paired repeats; rows
from before the repeat protocol give points without an interval) as the regression check uses
(:mod:`smtbench.report.metrics`); the smoke baseline (``workflow/baselines/smoke.csv``) is read the same way at every
commit that changed it. A *step* is a change between consecutive points that the intervals do not explain: the new
value outside the previous point's interval and the previous value outside the new one's (where a side has no
interval, the other side's alone decides; with none, no step is claimed).
"""
from __future__ import annotations

import io
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt
import pandas as pd

from . import metrics
from .. import procs

RAW = "results/raw"
SMOKE = "workflow/baselines/smoke.csv"

# experiment (raw folder) -> (metrics writer, the headline ratio metrics drawn)
HEADLINES: dict[str, tuple[Callable[[pd.DataFrame], list], list[str]]] = {
    "mokry_lm": (metrics.mokry_lm, ["automaton_vs_kenlm_probing_cpp", "speedup"]),
    "glm_btree": (metrics.glm_btree, ["btree_vs_kenlm_trie_cpp", "btree_vs_probing"]),
    "mokry_hash": (metrics.mokry_hash, ["speedup"]),
    "mediani_scoring": (metrics.mediani, ["speedup_vs_sort"]),
    "mokry_decoder": (metrics.mokry_decoder, ["speedup_vs_lazy"]),
}
SMOKE_HEADLINES = {e: m for e, (_, m) in HEADLINES.items()}


def _git(root: Path, *args: str) -> str:
    return procs.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def commits(root: Path, path: str) -> list[tuple[str, str]]:
    """(sha, ISO date) of every commit that changed ``path``, oldest first."""
    out = _git(root, "log", "--format=%H %cI", "--", path)
    return [tuple(line.split(" ", 1)) for line in reversed(out.splitlines()) if line.strip()]  # type: ignore[misc]


_BLOBS: dict[str, list[dict]] = {}  # blob id -> its rows (most files are unchanged from one commit to the next)


def blobs_at(root: Path, sha: str, experiment: str) -> tuple[str, ...]:
    """The blob ids of the experiment's JSON-lines files at ``sha``."""
    out = []
    for line in _git(root, "ls-tree", "-r", sha, f"{RAW}/{experiment}/").splitlines():
        meta, _, path = line.partition("\t")
        if path.endswith(".jsonl"):
            out.append(meta.split()[2])
    return tuple(out)


def rows_of(root: Path, blobs: tuple[str, ...]) -> pd.DataFrame:
    recs: list[dict] = []
    for b in blobs:
        if b not in _BLOBS:
            _BLOBS[b] = [json.loads(x) for x in _git(root, "cat-file", "-p", b).splitlines() if x.strip()]
        recs += _BLOBS[b]
    return pd.DataFrame(recs)


@dataclass
class History:
    points: pd.DataFrame   # commit, date, source, experiment, key, metric, value, ci_low, ci_high, step
    skipped: list[str]     # commits whose rows the current code cannot read (and why)


def _records_frame(recs: list, sha: str, date: str, source: str) -> pd.DataFrame:
    df = pd.DataFrame(recs, columns=metrics.COLUMNS)
    if df.empty:
        return df
    ratios = df[df.kind == "ratio"].copy()
    ci = df[df.kind == "ci"]
    lo = {(k, m.removesuffix("_ci_low")): float(v) for k, m, v in zip(ci.key, ci.metric, ci.value)
          if m.endswith("_ci_low")}
    hi = {(k, m.removesuffix("_ci_high")): float(v) for k, m, v in zip(ci.key, ci.metric, ci.value)
          if m.endswith("_ci_high")}
    ratios["value"] = ratios["value"].astype(float)
    ratios["ci_low"] = [lo.get((k, m), math.nan) for k, m in zip(ratios.key, ratios.metric)]
    ratios["ci_high"] = [hi.get((k, m), math.nan) for k, m in zip(ratios.key, ratios.metric)]
    ratios.insert(0, "source", source)
    ratios.insert(0, "date", date)
    ratios.insert(0, "commit", sha[:10])
    return ratios.drop(columns="kind")


def collect(root: str | Path = ".") -> History:
    root = Path(root)
    frames, skipped = [], []
    for exp, (writer, heads) in HEADLINES.items():
        seen: dict[tuple[str, ...], list] = {}
        for sha, date in commits(root, f"{RAW}/{exp}/"):
            try:
                blobs = blobs_at(root, sha, exp)
                if blobs not in seen:
                    rows = rows_of(root, blobs)
                    seen[blobs] = writer(rows) if not rows.empty else []
                recs = seen[blobs]
            except Exception as exc:  # rows of an older layout than this code reads: say so, draw the rest
                skipped.append(f"{sha[:10]} {exp}: {type(exc).__name__}: {exc}"[:200])
                continue
            f = _records_frame(recs, sha, date, "rows")
            if len(f):
                frames.append(f[f.metric.isin(heads)])
    for sha, date in commits(root, SMOKE):
        try:
            text = _git(root, "show", f"{sha}:{SMOKE}")
            base = pd.read_csv(io.StringIO(text), dtype={"value": str})
        except Exception as exc:
            skipped.append(f"{sha[:10]} smoke: {exc}"[:200])
            continue
        for exp, g in base.groupby("experiment"):
            heads = SMOKE_HEADLINES.get(str(exp), [])
            f = _records_frame(list(g.itertuples(index=False, name=None)), sha, date, "smoke")
            if len(f):
                frames.append(f[f.metric.isin(heads)].assign(experiment=exp))
    pts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["commit", "date", "source", "experiment", "key", "metric", "value", "ci_low", "ci_high"])
    pts = pts.sort_values(["source", "experiment", "key", "metric", "date"]).reset_index(drop=True)
    pts["step"] = _steps(pts)
    return History(pts, skipped)


def _steps(pts: pd.DataFrame) -> list[bool]:
    out = []
    prev: dict[tuple, tuple[float, float, float]] = {}
    for r in pts.itertuples():
        k = (r.source, r.experiment, r.key, r.metric)
        cur = (r.value, r.ci_low, r.ci_high)
        step = False
        if k in prev:
            pv, plo, phi = prev[k]
            has_p, has_c = plo == plo and phi == phi, r.ci_low == r.ci_low and r.ci_high == r.ci_high
            out_p = has_p and not plo <= r.value <= phi   # the new value outside the previous interval
            out_c = has_c and not r.ci_low <= pv <= r.ci_high
            step = (has_p or has_c) and (out_p or not has_p) and (out_c or not has_c)
        out.append(bool(step))
        prev[k] = cur
    return out


def figure(h: History, experiment: str):
    """One panel per headline metric, one line per key (solid: the committed rows; dashed: the smoke baseline),
    x = the commits (oldest first) that changed either; error bars = the 95% interval (points without one: rows that
    cannot be paired); a red ring marks a step."""
    d = h.points[h.points.experiment == experiment]
    d = d.assign(key=[k if s == "rows" else f"smoke {k}" for s, k in zip(d.source, d.key)])
    metrics_ = sorted(d.metric.unique()) or ["(none)"]
    fig, axes = plt.subplots(len(metrics_), 1, figsize=(9, 3.2 * len(metrics_)), squeeze=False)
    order = sorted(d[["date", "commit"]].drop_duplicates().itertuples(index=False))
    xpos = {c: i for i, (_, c) in enumerate(order)}
    for ax, metric in zip(axes[:, 0], metrics_):
        m = d[d.metric == metric]
        for key, g in m.groupby("key"):
            x = [xpos[c] for c in g.commit]
            line, = ax.plot(x, g.value, marker="o", ms=3, lw=0.8, label=str(key),
                            ls="--" if str(key).startswith("smoke ") else "-")
            has = g.ci_low.notna() & g.ci_high.notna()
            if has.any():
                gx = [xpos[c] for c in g.commit[has]]
                ax.errorbar(gx, g.value[has], yerr=[(g.value - g.ci_low)[has].clip(lower=0),
                                                    (g.ci_high - g.value)[has].clip(lower=0)],
                            fmt="none", ecolor=line.get_color(), capsize=3, lw=1)
            st = g[g.step]
            if len(st):
                ax.scatter([xpos[c] for c in st.commit], st.value, s=90, facecolors="none", edgecolors="red",
                           zorder=5)
        ax.axhline(1.0, color="0.6", lw=0.6, ls=":")
        v = m.value.dropna()
        if len(v) and (v > 0).all():  # ratios: a log axis spanning the estimates; a wider bar runs off the panel
            ax.set_yscale("log")  # (two-repeat intervals reached 350x and flattened every other point)
            ax.set_ylim(v.min() / 1.5, v.max() * 1.5)
        ax.set_ylabel(metric, fontsize=8)
        ax.set_xticks(range(len(order)), [f"{c[:7]} {dt[5:16]}" for dt, c in order], fontsize=6, rotation=60,
                      ha="right")
        ax.grid(alpha=0.3)
        if 0 < m.key.nunique() <= 16:
            ax.legend(fontsize=6, ncol=2)
    if d.empty:
        axes[0, 0].text(0.5, 0.5, "no committed rows in this checkout's history", ha="center",
                        transform=axes[0, 0].transAxes)
    axes[0, 0].set_title(f"{experiment}: headline ratios over the commits that changed its rows (solid) or the smoke "
                         "baseline (dashed)\nbars: 95% interval over paired repeats (none: rows that cannot be "
                         "paired; log axis over the estimates, wider bars run off it); red ring: a step beyond the "
                         "intervals", fontsize=8)
    return fig


def write(h: History, figures: str | Path, table: str | Path | None = None) -> list[Path]:
    from .common import save_figure, write_table

    out = []
    figures = Path(figures)
    for exp in HEADLINES:  # every one, so that a workflow rule can name them
        path = figures / f"history_{exp}.png"
        save_figure(figure(h, exp), path)
        out.append(path)
    if table:
        steps = int(h.points.step.sum())
        write_table(h.points, table, "History: headline ratios over the commits that changed them",
                    notes=f"{len(h.points)} points, {steps} steps beyond the intervals. Commits the current code "
                          f"cannot read: {len(h.skipped)}" + ("".join(f"\n- {s}" for s in h.skipped)))
    return out
