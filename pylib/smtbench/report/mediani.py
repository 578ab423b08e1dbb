"""Mediani et al. (2012), parallel phrase scoring: Table 1 (time per system on the largest corpus), Table 3
(time against corpus size), Table 4 (the distributed form) and a scaling figure, from `bench tmscore` rows.

Ours ("Multithreaded" = `smtbench tm score`, C, external memory), "Moses" = the sort pipeline
(`tm score-sort`: GNU sort + a single-threaded streaming scorer and consolidate, in C), "in-memory" =
`tm score-memory` (pandas). Times are the minimum over repeats (median beside them)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ..protocol import kept, paired_ratios
from .common import add_interval, paper_values

POINT = ["system", "fraction", "threads", "memory", "partitions"]


def _rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that count (retaken attempts left out), memory as text, and `t`: the time a ratio compares (the critical
    path for the distributed form, the wall time otherwise)."""
    r = kept(rows).copy()
    r["memory"] = r["memory"].fillna("").astype(str)
    t = r["seconds"]
    if "s_critical_path" in r:
        t = r["s_critical_path"].where(r["system"] == "distributed", t)
    r["t"] = t
    return r


def _is(rows: pd.DataFrame, pt) -> pd.Series:
    """The rows of one per_point() point."""
    m = pd.Series(True, index=rows.index)
    for c in POINT:
        v = pt[c]
        m &= rows[c].isna() if v is None or (isinstance(v, float) and v != v) else rows[c] == v
    return m


def _ratios(rows: pd.DataFrame, fast, slow) -> list[float]:
    """Per-repeat time(slow) / time(fast) of two points (empty when either is missing)."""
    if fast is None or slow is None:
        return []
    r = _rows(rows)
    return paired_ratios(r, _is(r, fast), _is(r, slow), value="t")


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    rows = kept(rows).copy()
    rows["memory"] = rows["memory"].fillna("").astype(str)
    agg = dict(seconds_min=("seconds", "min"), seconds_median=("seconds", "median"),
               peak_rss_mib=("peak_rss_bytes", lambda x: x.max() / 2**20), lines=("lines", "first"),
               repeats=("seconds", "count"))
    if "s_critical_path" in rows:
        agg["critical_path_s"] = ("s_critical_path", "min")
    return rows.groupby(POINT, dropna=False).agg(**agg).reset_index()


def _best(pts: pd.DataFrame, system: str, fraction: float, threads: int | None = None) -> pd.Series | None:
    q = pts[(pts.system == system) & (pts.fraction == fraction)]
    if threads is not None:
        q = q[q.threads == threads]
    if q.empty:
        return None
    return q.loc[q.seconds_min.idxmin()]


def table1(rows: pd.DataFrame) -> pd.DataFrame:
    """Scoring time per system on the largest corpus measured (the paper: WMT2011, 13.8M pairs)."""
    pts = per_point(rows)
    frac = pts[pts.system.isin(["ours", "sort"])].fraction.max()
    out = []
    per_row: list[list[float]] = []
    sort = _best(pts, "sort", frac)
    label = {"sort": "Moses", "memory": "in-memory (pandas)"}
    for system, threads in [("sort", None), ("memory", None)] + [("ours", t) for t in sorted(pts.threads.unique())]:
        r = _best(pts, system, frac, threads)
        if r is None:
            continue
        if system in label:
            name = label[system]
        elif threads == pts[pts.system == "ours"].threads.max():
            name = "Multithreaded"
        else:
            name = f"ours, {threads} thread{'s' if threads > 1 else ''}"
        out.append(dict(key=name, fraction=frac, lines=int(r.lines), threads=int(r.threads), memory=r.memory,
                        seconds_min=r.seconds_min, seconds_median=r.seconds_median, peak_rss_mib=r.peak_rss_mib,
                        speedup_vs_sort=(sort.seconds_min / r.seconds_min) if sort is not None else float("nan")))
        per_row.append(_ratios(rows, r, sort))
    df = add_interval(pd.DataFrame(out), "speedup_vs_sort", per_row)
    pv = paper_values("mediani2012", "table1")
    moses = float(pv.loc[pv.key == "Moses", "paper_hours"].iloc[0])
    pv["paper_speedup_vs_moses"] = moses / pv["paper_hours"]
    df = df.merge(pv, on="key", how="outer")
    df["n_repeats"] = df["n_repeats"].astype("Int64")
    return df


def table3(rows: pd.DataFrame) -> pd.DataFrame:
    """Scoring time against corpus size: sort pipeline, in-memory, ours at 1 and at most threads. The paper's
    two corpora (EPPS+NC, then +UN) sit beside our full corpus and our x4 corpus."""
    pts = per_point(rows)
    tmax = int(pts[pts.system == "ours"].threads.max())
    out = []
    vs_sort: list[list[float]] = []
    vs_1t: list[list[float]] = []
    for frac in sorted(pts[pts.system != "distributed"].fraction.unique()):
        rec = dict(fraction=frac)
        vs_sort.append(_ratios(rows, _best(pts, "ours", frac, tmax), _best(pts, "sort", frac)))
        vs_1t.append(_ratios(rows, _best(pts, "ours", frac, tmax), _best(pts, "ours", frac, 1)))
        for name, system, th in [("sort", "sort", None), ("memory", "memory", None), ("ours_1t", "ours", 1),
                                 (f"ours_{tmax}t", "ours", tmax)]:
            r = _best(pts, system, frac, th)
            rec[f"{name}_s"] = r.seconds_min if r is not None else float("nan")
            if r is not None:
                rec["lines"] = int(r.lines)
                if system == "ours":
                    rec[f"{name}_rss_mib"] = r.peak_rss_mib
        rec["speedup_vs_sort"] = rec["sort_s"] / rec[f"ours_{tmax}t_s"]
        rec["thread_speedup"] = rec["ours_1t_s"] / rec[f"ours_{tmax}t_s"]
        out.append(rec)
    df = add_interval(add_interval(pd.DataFrame(out), "speedup_vs_sort", vs_sort), "thread_speedup", vs_1t)
    df["key"] = df.fraction.map({1.0: "EPPS+NC", float(df.fraction.max()): "+UN"}).where(df.fraction >= 1)
    pv = paper_values("mediani2012", "table3")
    pv["paper_speedup"] = pv["paper_moses_hours"] / pv["paper_multithreaded_hours"]
    df = df.merge(pv, on="key", how="left")
    df = df.rename(columns={"key": "paper_corpus"})
    return df


def table4(rows: pd.DataFrame) -> pd.DataFrame:
    """The distributed form with K partitions: total time on one machine (partitions one after another) and
    the critical path (partition + slowest partition + merge: the time with one node per partition)."""
    pts = per_point(rows)
    d = pts[pts.system == "distributed"].sort_values("partitions")
    if d.empty:
        return pd.DataFrame()
    frac = float(d.fraction.iloc[0])
    sort = _best(pts, "sort", frac)
    ours = _best(pts, "ours", frac, int(d.threads.max()))
    out = d[["partitions", "fraction", "lines", "threads", "memory", "seconds_min", "critical_path_s",
             "peak_rss_mib"]].copy()
    out["speedup_vs_sort"] = sort.seconds_min / out.critical_path_s if sort is not None else float("nan")
    out["vs_single_run"] = out.critical_path_s / ours.seconds_min if ours is not None else float("nan")
    dist = [d.loc[i] for i in out.index]
    out = add_interval(out, "speedup_vs_sort", [_ratios(rows, x, sort) for x in dist])
    out = add_interval(out, "vs_single_run", [_ratios(rows, ours, x) for x in dist])
    out["key"] = "Distributed"
    pv = paper_values("mediani2012", "table4")
    moses = float(pv.loc[pv.key == "Moses", "paper_hours"].iloc[0])
    pv["paper_speedup_vs_moses"] = moses / pv["paper_hours"]
    pv = pv[pv.key == "Distributed"]
    return out.merge(pv, on="key", how="left").drop(columns=["key"])


def fig_scaling(rows: pd.DataFrame):
    """Left: time against corpus size per system. Right: ours against threads, one line per budget."""
    pts = per_point(rows)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for system, label in [("sort", "sort pipeline (Moses-style)"), ("memory", "in-memory (pandas)")]:
        q = pts[pts.system == system].sort_values("lines")
        if not q.empty:
            a.plot(q.lines, q.seconds_min, "o-", label=label)
    o = pts[pts.system == "ours"]
    for t in sorted(o.threads.unique()):
        q = o[o.threads == t].groupby("lines").seconds_min.min().reset_index()
        a.plot(q.lines, q.seconds_min, "s-", label=f"ours, {t} thread{'s' if t > 1 else ''}")
    a.set_xscale("log"); a.set_yscale("log")
    a.set_xlabel("extract lines"); a.set_ylabel("seconds (min over repeats)")
    a.set_title("Scoring time vs corpus size (Table 3 analogue)")
    a.legend(fontsize=8)
    big = o[o.fraction == o.fraction.max()]
    for m in sorted(big.memory.unique(), key=lambda x: float(x[:-1]) * {"K": 1, "M": 2**10, "G": 2**20}[x[-1]]):
        q = big[big.memory == m].sort_values("threads")
        b.plot(q.threads, q.seconds_min, "o-", label=f"budget {m}")
    b.set_xlabel("threads"); b.set_ylabel("seconds")
    b.set_title(f"Ours on the x{big.fraction.max():g} corpus")
    b.legend(fontsize=8)
    fig.tight_layout()
    return fig
