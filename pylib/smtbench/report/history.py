"""`smtbench report history`: each headline ratio over the commits that changed it (airspeed velocity's idea, computed
from our own committed rows), and the deterministic counts beside it where count rows are given.

For every commit that changed ``results/raw/<experiment>/`` the experiment's rows as committed there are read back
from git and turned into the same ratio metrics (with their 95% intervals where the rows carry paired repeats; rows
from before the repeat protocol give points without an interval) as the regression check uses (each experiment's
report module's ``regression_metrics``); the smoke baseline (``workflow/baselines/smoke.csv``) is read the same way at
every commit that changed it. A *step* is a change between consecutive points that the intervals do not explain: the new
value outside the previous point's interval and the previous value outside the new one's (where a side has no
interval, the other side's alone decides; with none, no step is claimed).

Counts (``--counts GLOB``, optional; nothing is drawn for them when no file matches): JSON-lines (or CSV) rows, read
from the files matching the glob now and at every commit that changed them, one row per counted point and side:

- ``experiment``: the experiment whose figure shows it (``mokry_lm``, ...);
- ``key`` (else ``point``, else ``kernel``): the headline key it belongs to (``model=bible.o5``); a key no headline
  has gets a panel of its own;
- ``git_sha`` (else ``machine_git_sha``, else ``commit``): the code it counted (``-dirty`` is cut off; a sha this
  repository lacks is listed as unreadable);
- ``side`` (else ``system``): ``ours`` or a peer's name (absent: ours);
- ``instructions_per_unit`` and/or ``ll_misses_per_unit`` (per query / source word / extract line);
- ``headline`` (optional): the headline metric whose panel it joins (absent: every panel of its key).

Where ours and a peer are both counted at a commit, the panel draws ours / peer; otherwise ours per unit. Counts go on
the panel's right-hand (log) axis: at most two count series beside the two time series (the committed rows and the
smoke baseline), so a panel never holds more than four.
"""
from __future__ import annotations

import fnmatch
import glob as globmod
import io
import json
import math
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import pandas as pd

from . import glm_btree, mediani_scoring, metrics, mokry_decoder, mokry_hash, mokry_lm
from .. import procs

RAW = "results/raw"
SMOKE = "workflow/baselines/smoke.csv"

# experiment (raw folder) -> (metrics writer, the headline ratio metrics drawn)
HEADLINES: dict[str, tuple[Callable[[pd.DataFrame], list], list[str]]] = {
    "mokry_lm": (mokry_lm.regression_metrics, ["automaton_vs_kenlm_probing_cpp", "speedup"]),
    "glm_btree": (glm_btree.regression_metrics, ["btree_vs_kenlm_trie_cpp", "btree_vs_probing"]),
    "mokry_hash": (mokry_hash.regression_metrics, ["speedup"]),
    "mediani_scoring": (mediani_scoring.regression_metrics, ["speedup_vs_sort"]),
    "mokry_decoder": (mokry_decoder.regression_metrics, ["speedup_vs_lazy"]),
}
SMOKE_HEADLINES = {e: m for e, (_, m) in HEADLINES.items()}
# which keys are headlines (figure panels, table columns); history.csv keeps every key. mokry_hash: Mokry's layout
# (no variant suffix) and KenLM's C++ table at one thread - its other layouts and t=2 are the layouts table's.
HEADLINE_KEY: dict[str, Callable[[str], bool]] = {
    "mokry_hash": lambda k: re.fullmatch(r"mib=\d+,(hit|miss),t=1(,kenlm-cpp)?", k) is not None,
}

COUNT_KEY = ("key", "point", "kernel")
COUNT_SHA = ("git_sha", "machine_git_sha", "commit")
COUNT_SIDE = ("side", "system")
COUNT_METRICS = {"instructions_per_unit": "instructions / unit", "ll_misses_per_unit": "LL misses / unit"}
#: `smtbench count`'s own row names (experiment "counts", metrics ir/ll_miss per unit): each point's experiment by the
#: prefix of its name, its metrics under the names above
COUNT_METRIC_ALIASES = {"ir_per_unit": "instructions_per_unit", "ll_miss_per_unit": "ll_misses_per_unit"}
COUNT_POINT_EXPERIMENT = {"hash-": "mokry_hash", "kenlm-hash": "mokry_hash", "lm-": "mokry_lm",
                          "kenlm-probing": "mokry_lm", "btree-": "glm_btree", "kenlm-trie": "glm_btree",
                          "cube-": "mokry_decoder", "normal-": "mokry_decoder"}


def _count_row(r: dict) -> dict:
    """A row of `smtbench count` in this module's terms (other rows unchanged)."""
    if r.get("experiment") != "counts":
        return r
    r = dict(r)
    for a, m in COUNT_METRIC_ALIASES.items():
        if a in r and m not in r:
            r[m] = r[a]
    name = str(r.get("point", ""))
    r["experiment"] = next((e for pre, e in COUNT_POINT_EXPERIMENT.items() if name.startswith(pre)), None)
    return r
MAX_SERIES = 4       # per panel: committed rows, smoke baseline, at most two counts
MAX_LABELS = 8       # commit labels on a panel's x axis (the others keep an unlabelled tick)
PANEL_COLS = 4
CLIP = 1.4           # a panel's y range takes an interval up to CLIP x (or / CLIP) its estimate; a wider one runs off
COLORS = {"rows": "C0", "smoke": "C1", "instructions_per_unit": "0.15", "ll_misses_per_unit": "C2"}


def _git(root: Path, *args: str) -> str:
    return procs.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def commits(root: Path, path: str) -> list[tuple[str, str]]:
    """(sha, ISO date) of every commit that changed ``path``, oldest first."""
    out = _git(root, "log", "--format=%H %cI", "--", path)
    return [tuple(line.split(" ", 1)) for line in reversed(out.splitlines()) if line.strip()]  # type: ignore[misc]


_BLOBS: dict[str, list[dict]] = {}  # blob id -> its rows (most files are unchanged from one commit to the next)


def blobs_at(root: Path, sha: str, experiment: str, skip: str | None = None) -> tuple[str, ...]:
    """The blob ids of the experiment's JSON-lines files at ``sha`` (but those matching ``skip``, a glob relative to
    the repository: count rows are not time rows)."""
    out = []
    for line in _git(root, "ls-tree", "-r", sha, f"{RAW}/{experiment}/").splitlines():
        meta, _, path = line.partition("\t")
        if path.endswith(".jsonl") and not (skip and fnmatch.fnmatch(path, skip)):
            out.append(meta.split()[2])
    return tuple(out)


def rows_of(root: Path, blobs: tuple[str, ...]) -> pd.DataFrame:
    recs: list[dict] = []
    for b in blobs:
        if b not in _BLOBS:
            _BLOBS[b] = [json.loads(x) for x in _git(root, "cat-file", "-p", b).splitlines() if x.strip()]
        recs += _BLOBS[b]
    return pd.DataFrame(recs)


COLUMNS = ["commit", "date", "source", "experiment", "key", "metric", "value", "ci_low", "ci_high", "best"]
# headline ('' = every panel of the key), metric (one of COUNT_METRICS), per ('peer': ours / peer; 'unit': ours per unit)
COUNT_COLUMNS = ["commit", "date", "experiment", "key", "headline", "metric", "value", "per"]


@dataclass
class History:
    points: pd.DataFrame   # commit, date, source, experiment, key, metric, value, ci_low, ci_high, best, step
    skipped: list[str]     # commits whose rows the current code cannot read (and why)
    counts: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COUNT_COLUMNS))


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
    est = {(k, m.removesuffix(metrics.PAIRED)): float(v) for k, m, v in zip(ci.key, ci.metric, ci.value)
           if m.endswith(metrics.PAIRED)}
    # a point is the interval's own estimate where the rows have one (the tables' best-times ratio, kept as `best`,
    # can lie outside the interval: steps are judged on estimates and intervals that belong together)
    ratios["best"] = ratios["value"].astype(float)
    ratios["value"] = [est.get((k, m), b) for k, m, b in zip(ratios.key, ratios.metric, ratios.best)]
    ratios["ci_low"] = [lo.get((k, m), math.nan) for k, m in zip(ratios.key, ratios.metric)]
    ratios["ci_high"] = [hi.get((k, m), math.nan) for k, m in zip(ratios.key, ratios.metric)]
    ratios.insert(0, "source", source)
    ratios.insert(0, "date", date)
    ratios.insert(0, "commit", sha[:10])
    return ratios.drop(columns="kind")


def collect(root: str | Path = ".", counts: str | None = None) -> History:
    """The headline points over the repository's history; ``counts``: a glob of count rows (see the module doc)."""
    root = Path(root)
    frames, skipped = [], []
    skip = _in_repo(root, counts) if counts else None
    for exp, (writer, heads) in HEADLINES.items():
        seen: dict[tuple[str, ...], list] = {}
        for sha, date in commits(root, f"{RAW}/{exp}/"):
            try:
                blobs = blobs_at(root, sha, exp, skip)
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
    last_smoke: dict[str, list] = {}
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
            f = f[f.metric.isin(heads)].assign(experiment=exp) if len(f) else f
            same = _smoke_values(f)
            if len(f) and same != last_smoke.get(str(exp)):  # a commit that changed only other experiments: none
                frames.append(f)
                last_smoke[str(exp)] = same
    frames = [f for f in frames if len(f)]
    pts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    pts = pts.sort_values(["source", "experiment", "key", "metric", "date"]).reset_index(drop=True)
    pts["step"] = _steps(pts)
    h = History(pts, skipped)
    if counts:
        h.counts = read_counts(root, counts, skipped)
    return h


def _smoke_values(f: pd.DataFrame) -> list:
    if f.empty:
        return []
    return sorted(map(repr, f[["key", "metric", "value", "ci_low", "ci_high"]].itertuples(index=False, name=None)))


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


# --- counts -------------------------------------------------------------------------------------------------------

class CountRowsError(ValueError):
    """A count rows file that cannot be read (names the file and line)."""


def _parse_rows(text: str, name: str) -> list[dict]:
    if name.endswith(".csv"):
        return pd.read_csv(io.StringIO(text)).to_dict("records") if text.strip() else []
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise CountRowsError(f"{name}:{i}: not a JSON row ({exc.msg})") from None
    return out


def _first(row: dict, names: tuple[str, ...]) -> object:
    for n in names:
        v = row.get(n)
        if v is not None and v == v and v != "":
            return v
    return None


def _in_repo(root: Path, pattern: str) -> str | None:
    """``pattern`` (relative to the working directory) relative to the repository, or None outside it."""
    rel = os.path.relpath(os.path.abspath(pattern), root.resolve())
    return None if rel.startswith("..") else rel


def read_counts(root: Path, pattern: str, skipped: list[str]) -> pd.DataFrame:
    """Count rows of the files matching ``pattern`` (relative to the working directory) now and at every commit that
    changed them (rows of the same sha, key, side and metric: the newest file wins); see the module doc."""
    texts: list[tuple[str, str]] = []  # (name, text), oldest first
    rel = _in_repo(root, pattern)
    if rel is not None:
        parts = Path(rel).parts
        fixed = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), len(parts))
        prefix = str(Path(*parts[:fixed])) if fixed else "."
        for sha, _ in commits(root, prefix):
            for line in _git(root, "ls-tree", "-r", sha, "--", prefix).splitlines():
                meta, _, path = line.partition("\t")
                if fnmatch.fnmatch(path, rel):
                    blob = meta.split()[2]
                    texts.append((f"{sha[:10]}:{path}", _git(root, "cat-file", "-p", blob)))
    for path in sorted(globmod.glob(pattern)):
        texts.append((path, Path(path).read_text(encoding="utf-8")))
    recs: dict[tuple, dict] = {}
    for name, text in texts:
        for r in map(_count_row, _parse_rows(text, name)):
            sha, key = _first(r, COUNT_SHA), _first(r, COUNT_KEY)
            if sha is None or key is None or not r.get("experiment"):
                continue
            side = str(_first(r, COUNT_SIDE) or "ours")
            for m in COUNT_METRICS:
                v = r.get(m)
                if v is not None and v == v:
                    k = (str(sha).removesuffix("-dirty"), str(r["experiment"]), str(key),
                         str(r.get("headline") or ""), m, side)
                    recs[k] = {"sha": k[0], "experiment": k[1], "key": k[2], "headline": k[3], "metric": m,
                               "side": side, "value": float(v)}  # type: ignore[arg-type]
    if not recs:
        return pd.DataFrame(columns=COUNT_COLUMNS)
    c = pd.DataFrame(recs.values())
    dates: dict[str, tuple[str, str]] = {}  # the rows' sha -> (the commit's sha as the points name it, its date)
    for sha in c.sha.unique():
        try:
            full, date = _git(root, "show", "-s", "--format=%H %cI", f"{sha}^{{commit}}").split()
            dates[sha] = (full[:10], date)
        except (subprocess.CalledProcessError, ValueError):
            skipped.append(f"{sha[:10]} counts: a commit this repository lacks")
    c = c[c.sha.isin(dates)]
    out = []
    for (sha, exp, key, head, m), g in c.groupby(["sha", "experiment", "key", "headline", "metric"]):
        ours = g[g.side == "ours"].value
        peer = g[g.side != "ours"].value
        if ours.empty:
            continue
        per = "peer" if len(peer) else "unit"
        value = float(ours.iloc[0] / peer.iloc[0]) if len(peer) else float(ours.iloc[0])
        out.append({"commit": dates[sha][0], "date": dates[sha][1], "experiment": exp, "key": key, "headline": head,
                    "metric": m, "value": value, "per": per})
    return pd.DataFrame(out, columns=COUNT_COLUMNS)


# --- figure -------------------------------------------------------------------------------------------------------

def _natural(s: str) -> list:
    """Sort key: numbers by value (fraction=0.25 before 0.5, mib=16 before 128)."""
    return [(1, float(t), "") if i % 2 else (0, 0.0, t) for i, t in enumerate(re.split(r"(\d+(?:\.\d+)?)", s))]


def headline_points(h: History, experiment: str) -> pd.DataFrame:
    d = h.points[h.points.experiment == experiment]
    keep = HEADLINE_KEY.get(experiment)
    return d[[keep(k) for k in d.key]] if keep is not None and len(d) else d


@dataclass
class Panel:
    metric: str            # a headline metric, or "counts" for a key no headline has
    key: str
    series: list[str]      # of "rows", "smoke" and the count metrics, at most MAX_SERIES


def panels(h: History, experiment: str) -> list[Panel]:
    """One panel per headline (metric, key); counts join their key's panels (or one of their own)."""
    d = headline_points(h, experiment)
    c = h.counts[h.counts.experiment == experiment]
    order = {m: i for i, m in enumerate(HEADLINES.get(experiment, (None, []))[1])}
    heads = sorted({(m, k) for m, k in zip(d.metric, d.key)}, key=lambda mk: (order.get(mk[0], 99), _natural(mk[1])))
    heads += sorted({("counts", k) for k in c.key if k not in set(d.key)}, key=lambda mk: _natural(mk[1]))
    out = []
    for metric, key in heads:
        s = [src for src in ("rows", "smoke") if ((d.metric == metric) & (d.key == key) & (d.source == src)).any()]
        mine = c[(c.key == key) & ((c.headline == "") | (c.headline == metric) | (metric == "counts"))]
        s += [m for m in COUNT_METRICS if (mine.metric == m).any()]
        assert len(s) <= MAX_SERIES, (experiment, metric, key, s)
        out.append(Panel(metric, key, s))
    return out


def thin(n: int, most: int = MAX_LABELS) -> list[int]:
    """At most ``most`` evenly spaced positions of ``n`` (the first and the last among them)."""
    if n <= most:
        return list(range(n))
    step = (n - 1) / (most - 1)
    return sorted({round(i * step) for i in range(most)})


def commit_order(h: History, experiment: str) -> list[tuple[str, str]]:
    """(date, commit) of every commit with a point or a count of the experiment, oldest first."""
    d = headline_points(h, experiment)
    c = h.counts[h.counts.experiment == experiment]
    return sorted(set(zip(d.date, d.commit)) | set(zip(c.date, c.commit)))


def commit_label(date: str, commit: str) -> str:
    return f"{commit[:7]} {date[5:10]}"


def _ylim(values: pd.Series, lows: pd.Series, highs: pd.Series) -> tuple[float, float]:
    """Spanning the estimates and their intervals, an interval cut at CLIP x its estimate (wider ones run off)."""
    lo = pd.concat([values, lows.where(lows >= values / CLIP, values / CLIP)]).min()
    hi = pd.concat([values, highs.where(highs <= values * CLIP, values * CLIP)]).max()
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 0.05
    return lo - pad, hi + pad


def figure(h: History, experiment: str):
    """Small multiples: one panel per headline (metric, key) with at most four series - the ratio in the committed
    rows (solid, bars: its 95% interval) and in the smoke baseline (dashed), and on the right-hand log axis the
    counts (instructions and LL misses, ours / peer or ours per unit); x = the commits (oldest first), labelled with
    short sha and date, thinned to MAX_LABELS; a red ring marks a step beyond the intervals."""
    d = headline_points(h, experiment)
    ps = panels(h, experiment)
    order = commit_order(h, experiment)
    xpos = {c: i for i, (_, c) in enumerate(order)}
    ncols = max(1, min(PANEL_COLS, len(ps)))
    nrows = max(1, math.ceil(len(ps) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols + 0.5, 2.3 * nrows + 1.3), squeeze=False,
                             layout="constrained")
    shown = thin(len(order))
    handles: dict[str, object] = {}
    for i, ax in enumerate(axes.flat):
        if i >= len(ps):
            ax.set_visible(False)
            continue
        p = ps[i]
        m = d[(d.metric == p.metric) & (d.key == p.key)]
        for src in ("rows", "smoke"):
            g = m[m.source == src].sort_values("date")
            if g.empty:
                continue
            x = [xpos[c] for c in g.commit]
            line, = ax.plot(x, g.value, marker="o", ms=3, lw=1.2 if src == "rows" else 0.9, color=COLORS[src],
                            ls="-" if src == "rows" else "--", gid=f"panel{i}",
                            label="committed rows (point: geometric mean of the paired repeats' ratios, bars: its 95% "
                            "interval; rows without repeats: the table's ratio)" if src == "rows" else "smoke baseline")
            handles.setdefault(src, line)
            has = g.ci_low.notna() & g.ci_high.notna()
            if has.any():
                gh = g[has]
                ax.errorbar([xpos[c] for c in gh.commit], gh.value,
                            yerr=[(gh.value - gh.ci_low).clip(lower=0), (gh.ci_high - gh.value).clip(lower=0)],
                            fmt="none", ecolor=COLORS[src], alpha=0.9 if src == "rows" else 0.5, capsize=2, lw=0.9)
            st = g[g.step]
            if len(st):
                ring = ax.scatter([xpos[c] for c in st.commit], st.value, s=60, facecolors="none", edgecolors="red",
                                  zorder=5, lw=1, label="step beyond the intervals")
                handles.setdefault("step", ring)
        if len(m):
            ax.set_ylim(*_ylim(m.value.astype(float), m.ci_low, m.ci_high))
            lo, hi = ax.get_ylim()
            if lo < 1 < hi:
                ax.axhline(1.0, color="0.5", lw=0.6, ls=":")
        ax.yaxis.set_major_locator(mticker.MaxNLocator(4))
        ax.tick_params(axis="y", labelsize=7)
        counts = [s for s in p.series if s in COUNT_METRICS]
        if counts:
            tw = ax.twinx()
            cm = h.counts[(h.counts.experiment == experiment) & (h.counts.key == p.key)
                          & ((h.counts.headline == "") | (h.counts.headline == p.metric) | (p.metric == "counts"))]
            per = "ours / peer" if (cm.per == "peer").any() else "ours per unit"
            for s in counts:
                g = cm[(cm.metric == s) & (cm.per == ("peer" if per == "ours / peer" else "unit"))].sort_values("date")
                line, = tw.plot([xpos[c] for c in g.commit], g.value, marker="s", ms=3, lw=1, color=COLORS[s],
                                gid=f"panel{i}", label=f"{COUNT_METRICS[s]} (right axis)")
                handles.setdefault(s, line)
            tw.set_yscale("log")
            lo, hi = tw.get_ylim()  # a narrow log range has no decade in it: label plain values instead
            tw.yaxis.set_major_locator(mticker.MaxNLocator(4) if hi / lo < 20 else mticker.LogLocator(subs=(1, 3)))
            tw.yaxis.set_major_formatter(mticker.FormatStrFormatter("%.3g"))
            tw.yaxis.set_minor_formatter(mticker.NullFormatter())
            tw.tick_params(axis="y", labelsize=6)
            tw.set_ylabel(f"count, {per}", fontsize=7)
        if p.metric == "counts":  # a key no headline has: the counts alone
            ax.tick_params(axis="y", left=False, labelleft=False)
        title = f"counts\n{p.key}" if p.metric == "counts" else f"{p.metric}\n{p.key}"
        ax.set_title(title, fontsize=7.5)
        ax.set_xlim(-0.5, max(len(order), 1) - 0.5)
        ax.set_xticks(range(len(order)), minor=True)
        ax.set_xticks(shown)
        below = i + ncols < len(ps)  # a panel under this one shows the labels
        ax.set_xticklabels([] if below else [commit_label(*order[j]) for j in shown], fontsize=6.5, rotation=45,
                           ha="right", rotation_mode="anchor")
        ax.grid(alpha=0.3)
    if not ps:
        axes[0, 0].set_visible(True)
        axes[0, 0].text(0.5, 0.5, "no committed rows in this checkout's history", ha="center",
                        transform=axes[0, 0].transAxes)
    fig.suptitle(f"{experiment}: each headline ratio over the commits that changed its rows or the smoke baseline "
                 f"({len(order)} commits; every commit is a tick, {len(shown)} labelled)", fontsize=9)
    handles = {k: handles[k] for k in ("rows", "smoke", "step", *COUNT_METRICS) if k in handles}
    if handles:
        fig.legend(list(handles.values()), [x.get_label() for x in handles.values()], loc="outside lower center",
                   ncol=min(5, len(handles)), fontsize=7, frameon=False)
    return fig


# --- table --------------------------------------------------------------------------------------------------------

def _cell(r) -> str:
    v = f"{r.value:.3g}"
    if r.step:
        v = f"**{v}**"
    if r.ci_low == r.ci_low and r.ci_high == r.ci_high:
        v += f" [{r.ci_low:.3g}, {r.ci_high:.3g}]"
    return v


def markdown(h: History) -> str:
    """A table per experiment and headline metric: commit, date, source, then each headline key's ratio [interval]
    (bold: a step beyond the intervals); the counts in a table of their own."""
    out = ["# History: headline ratios over the commits that changed them", "",
           "Each cell: the ratio [its 95% interval over paired repeats] as committed at that commit (`rows`: "
           "results/raw; `smoke`: the smoke baseline; a commit that changed neither for an experiment is left out "
           "of its tables). Where the rows have paired repeats the ratio is the interval's own estimate (the geometric "
           "mean of the per-repeat paired ratios, always inside its interval); rows without give the tables' ratio "
           "(of the points' minimum times; history.csv's `best` keeps that one for every point). **bold**: a "
           "step the intervals do not explain; empty: not measured there. Every key and metric, headline or not, "
           "and the counts: history.csv.", ""]
    for exp in HEADLINES:
        d = headline_points(h, exp)
        c = h.counts[h.counts.experiment == exp]
        out += [f"## {exp}", ""]
        if d.empty and c.empty:
            out += ["No committed rows in this checkout's history.", ""]
        for metric in HEADLINES[exp][1]:
            m = d[d.metric == metric]
            if m.empty:
                continue
            keys = sorted(m.key.unique(), key=_natural)
            t = m.assign(cell=[_cell(r) for r in m.itertuples()]).pivot_table(
                index=["date", "commit", "source"], columns="key", values="cell", aggfunc="first")
            t = t.reindex(columns=keys).reset_index().fillna("")
            t.insert(0, "commit ", t.pop("commit").str[:7])
            t["date"] = t["date"].str[:16].str.replace("T", " ")
            out += [f"### {metric}", "", t.rename(columns={"commit ": "commit"}).to_markdown(index=False), ""]
        if len(c):
            c = c.assign(col=[f"{k}: {COUNT_METRICS[m]}" + (" (ours/peer)" if p == "peer" else "")
                              for k, m, p in zip(c.key, c.metric, c.per)])
            t = c.pivot_table(index=["date", "commit"], columns="col", values="value", aggfunc="first")
            t = t.reindex(columns=sorted(t.columns, key=_natural)).reset_index()
            t["commit"] = t["commit"].str[:7]
            t["date"] = t["date"].str[:16].str.replace("T", " ")
            out += ["### counts", "", t.to_markdown(index=False, floatfmt=".4g"), ""]
    return "\n".join(out)


def write(h: History, figures: str | Path, table: str | Path | None = None) -> list[Path]:
    """history_<experiment>.png for every experiment; ``table``: <stem>.md (the tables a person reads) and
    <stem>.csv (every point, headline or not, and the counts, one per line)."""
    from ..ioutil import atomic_open
    from .common import save_figure  # (sets matplotlib's Agg backend)

    out = []
    figures = Path(figures)
    for exp in HEADLINES:  # every one, so that a workflow rule can name them
        path = figures / f"history_{exp}.png"
        save_figure(figure(h, exp), path)
        out.append(path)
    if table:
        stem = Path(table)
        pts = h.points
        if len(h.counts):
            cnt = h.counts.assign(source="count", ci_low=math.nan, ci_high=math.nan, best=math.nan, step=False,
                                  metric=[m if p == "unit" else f"{m}_ours_vs_peer" for m, p in
                                          zip(h.counts.metric, h.counts.per)])
            pts = pd.concat([pts, cnt[list(pts.columns)]], ignore_index=True)
        with atomic_open(stem.with_suffix(".csv")) as fh:
            pts.to_csv(fh, index=False, float_format="%.6g")
        steps = int(h.points.step.sum())
        notes = (f"{len(h.points)} points, {steps} steps beyond the intervals, {len(h.counts)} counts. Commits the "
                 f"current code cannot read: {len(h.skipped)}" + "".join(f"\n- {s}" for s in h.skipped))
        with atomic_open(stem.with_suffix(".md")) as fh:
            fh.write(markdown(h) + "\n" + notes + "\n")
    return out
