"""Mokry 2016 §3.1: Table 3.2 (best prefetch-queue speed-up per thread count) and Fig 3.2
(time per lookup against queue size, one line per table size)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from .common import paper_values

POINT = ["table_mib", "mode", "threads", "queue_size"]


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    """Min and median ns/lookup over repeats for each sweep point (the thesis keeps the minimum).
    Mode 'line' rows (random line reads, the machine's floor) are left out."""
    rows = rows[rows["mode"] != "line"]
    g = rows.groupby(POINT)["ns_per_lookup"]
    out = g.agg(ns_min="min", ns_median="median", repeats="count").reset_index()
    load = rows.groupby(POINT)["machine_load1"].max().rename("load1_max").reset_index()
    return out.merge(load, on=POINT)


def best_speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """For each (table, mode, threads): plain ns, best queue ns, its queue size, speed-up (all from mins)."""
    pts = per_point(rows)
    plain = pts[pts.queue_size == 0].set_index(["table_mib", "mode", "threads"])["ns_min"].rename("plain_ns")
    q = pts[pts.queue_size > 0]
    best = q.loc[q.groupby(["table_mib", "mode", "threads"])["ns_min"].idxmin()]
    best = best.set_index(["table_mib", "mode", "threads"])[["queue_size", "ns_min", "load1_max"]]
    best = best.rename(columns={"ns_min": "best_ns", "queue_size": "best_queue_size"})
    out = best.join(plain, how="inner").reset_index()
    out["speedup"] = out["plain_ns"] / out["best_ns"]
    cols = ["table_mib", "mode", "threads", "plain_ns", "best_ns", "best_queue_size", "speedup", "load1_max"]
    if "mean_lines" in rows:
        lines = rows.groupby(["table_mib", "mode"])["mean_lines"].first().rename("lines_per_lookup")
        out = out.merge(lines.reset_index(), on=["table_mib", "mode"], how="left")
        floor = rows[rows["mode"] == "line"].groupby(["table_mib", "threads"])["ns_per_lookup"].min()
        out = out.merge(floor.rename("line_floor_ns").reset_index(), on=["table_mib", "threads"], how="left")
        cols += ["lines_per_lookup", "line_floor_ns"]
    return out[cols]


def table3_2(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 3.2 at the largest table measured: ours (misses and hits) beside the thesis (137 GB table)."""
    best = best_speedups(rows)
    largest = int(best.table_mib.max())
    best = best[best.table_mib == largest]
    wide = None
    for mode in ("miss", "hit"):
        keep = [c for c in ("plain_ns", "best_ns", "best_queue_size", "speedup", "lines_per_lookup") if c in best]
        part = best[best["mode"] == mode].set_index("threads")[keep]
        part.columns = [f"{mode}_{c}" for c in part.columns]
        wide = part if wide is None else wide.join(part, how="outer")
    assert wide is not None
    if "line_floor_ns" in best:
        wide = wide.join(best.groupby("threads")["line_floor_ns"].first())
    wide = wide.reset_index()
    paper = paper_values("mokry2016", "table3_2")
    paper["threads"] = paper["key"].str.removeprefix("threads=").astype(int)
    paper = paper.drop(columns="key")
    out = wide.merge(paper, on="threads", how="outer").sort_values("threads")
    out.insert(0, "table_mib", largest)
    return out.reset_index(drop=True)


def fig3_2(rows: pd.DataFrame, threads: int = 1):
    """Time per lookup against queue size (0 = plain), one line per table size; misses and hits."""
    pts = per_point(rows)
    pts = pts[pts.threads == threads]
    modes = [m for m in ("miss", "hit") if m in set(pts["mode"])]
    fig, axes = plt.subplots(1, len(modes), figsize=(5.5 * len(modes), 4), sharey=True, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for mib, g in pts[pts["mode"] == mode].groupby("table_mib"):
            g = g.sort_values("queue_size")
            label = f"{mib / 1024:g} GiB" if mib >= 1024 else f"{mib} MiB"
            ax.plot(g.queue_size, g.ns_min, marker="o", ms=3, label=label)
        ax.set_title(f"{ {'miss': 'misses', 'hit': 'hits'}[mode]}, {threads} thread(s)")
        ax.set_xlabel("prefetch queue size (0 = plain lookup)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("ns per lookup (min of repeats)")
    axes[0][-1].legend(title="table size")
    fig.suptitle("Mokry Fig 3.2 reproduced: time per lookup vs in-flight prefetches")
    return fig
