"""Mokry 2016 §3.1: Table 3.2 (best prefetch-queue speed-up per thread count) and Fig 3.2
(time per lookup against queue size, one line per table size), on Mokry's key+value table (variant ``kv``); the
layout table beside them: every layout variant (KenLM's benchmark protocol ``keys``, line-aligned and split
layouts, their overflow-mark forms ``*-ovf``, huge pages off) with its lines per lookup and this machine's one-random-line floor."""
from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import pandas as pd

from ..protocol import kept, spell_counts
from .common import Ratio, add_interval, declare, paper_values, ratio_pairs
from .common import with_counts as _with_counts
from . import metrics
from ..experiments.frame import Verb, arg, counts_arg

POINT = ["variant", "table_mib", "mode", "threads", "queue_size"]
PAPER_VARIANT = "kv"  # Mokry's table: 16-byte key+value entries probed from the ideal bucket


# the declarations (report.common.declare): speed-ups and floors divide rows of one run, clock and thread count (ours:
# the wall clock); the comparison with KenLM's hash benchmark is its own table (vs_kenlm): CPU time against CPU time,
# one thread, one run - KenLM's program reads only its CPUTime(), so ours is read from the rows' cpu_ns_per_lookup
SPEEDUP = Ratio("speedup", num="the variant's best queue size", den="the same variant, plain lookups (queue 0)")
FLOOR = Ratio("best_over_floor", num="the variant's best queue size", den="one random line read, the same table")
VS_KENLM = Ratio("vs_kenlm_benchmark", num="ours: the row's variant at the row's queue size(s), CPU time per lookup, "
                 "one thread's misses", den="KenLM's probing_hash_table_benchmark in the same repeats: its best of the "
                 "row's KenLM queue sizes, CPU time per lookup")
declare("mokry_hash_layouts", SPEEDUP, FLOOR)
declare("mokry_hash_vs_kenlm", VS_KENLM)
declare("mokry_table3_2", Ratio("miss_speedup", SPEEDUP.num + ", misses", SPEEDUP.den),
        Ratio("hit_speedup", SPEEDUP.num + ", hits", SPEEDUP.den))
CPU = "cpu"  # the clock of KenLM's benchmark (its CPUTime()) and of ours' cpu_ns_per_lookup
LEGACY_CLOCKS = {"CPUTime": CPU}  # KenLM's rows before the clocks were named alike


def _pairs(ratio: Ratio, g: pd.DataFrame, num: pd.Series, den: pd.Series, where: str) -> list[float] | None:
    return ratio_pairs(ratio, g, num, den, value="ns_per_lookup", where=where)


def with_variant(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows from before the layouts existed are Mokry's table."""
    if "variant" not in rows:
        rows = rows.assign(variant=PAPER_VARIANT, layout=PAPER_VARIANT)
    if "clock" in rows:
        rows = rows.assign(clock=rows["clock"].replace(LEGACY_CLOCKS))
    return rows


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    """Min and median ns/lookup over repeats for each sweep point (the thesis keeps the minimum).
    Mode 'line' rows (random line reads, the machine's floor) are left out."""
    rows = kept(with_variant(rows))
    rows = rows[rows["mode"] != "line"]
    g = rows.groupby(POINT)["ns_per_lookup"]
    out = g.agg(ns_min="min", ns_median="median", ns_max="max", repeats="count").reset_index()
    load = rows.groupby(POINT)["machine_load1"].max().rename("load1_max").reset_index()
    return out.merge(load, on=POINT)


def best_speedups(rows: pd.DataFrame, variant: str | None = PAPER_VARIANT) -> pd.DataFrame:
    """For each (variant, table, mode, threads): plain ns, best queue ns, its queue size, speed-up (all from mins).
    ``variant``: keep only that one (default Mokry's table); None = every variant."""
    rows = with_variant(rows)
    if variant is not None:
        rows = rows[rows["variant"] == variant]
    key = ["variant", "table_mib", "mode", "threads"]
    pts = per_point(rows)
    plain = pts[pts.queue_size == 0].set_index(key)["ns_min"].rename("plain_ns")
    q = pts[pts.queue_size > 0]
    best = q.loc[q.groupby(key)["ns_min"].idxmin()]
    best = best.set_index(key)[["queue_size", "ns_min", "load1_max"]]
    best = best.rename(columns={"ns_min": "best_ns", "queue_size": "best_queue_size"})
    out = best.join(plain, how="inner").reset_index()
    out["speedup"] = out["plain_ns"] / out["best_ns"]
    cols = key + ["plain_ns", "best_ns", "best_queue_size", "speedup", "load1_max"]
    if "mean_lines" in rows:
        lines = rows.groupby(["variant", "table_mib", "mode"])["mean_lines"].first().rename("lines_per_lookup")
        out = out.merge(lines.reset_index(), on=["variant", "table_mib", "mode"], how="left")
        floor = rows[rows["mode"] == "line"].groupby(["variant", "table_mib", "threads"])["ns_per_lookup"].min()
        out = out.merge(floor.rename("line_floor_ns").reset_index(), on=["variant", "table_mib", "threads"],
                        how="left")
        cols += ["lines_per_lookup", "line_floor_ns"]
    out = out[cols]
    out = _intervals(out, rows)
    return out.drop(columns="variant") if variant is not None else out


def _intervals(out: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """speedup (plain / best queue) and best_over_floor's 95% intervals over the run's paired repeats, n_repeats."""
    r = rows.assign(queue_size=rows["queue_size"].fillna(0).astype(int))
    groups = {k: g for k, g in r.groupby(["variant", "table_mib", "threads"])}
    sp, fl = [], []
    for _, o in out.iterrows():
        g = groups.get((o.variant, o.table_mib, o.threads))
        if g is None:
            sp.append([]), fl.append([])
            continue
        best = (g["mode"] == o["mode"]) & (g["queue_size"] == int(o.best_queue_size))
        where = f"{o.variant}, {o.table_mib} MiB, {o['mode']}, {o.threads} thread(s)"
        sp.append(_pairs(SPEEDUP, g, best, (g["mode"] == o["mode"]) & (g["queue_size"] == 0), where))
        fl.append(_pairs(FLOOR, g, g["mode"] == "line", best, where) if (g["mode"] == "line").any() else [])
    out["speedup"] = [v if r is not None else float("nan") for v, r in zip(out["speedup"], sp)]
    out = add_interval(out, "speedup", [r or [] for r in sp])
    out["_floor_ratios"] = [r or [] for r in fl]
    tables = {k: g for k, g in rows.groupby("table_mib")}  # one run per table size
    out["retaken_repeats"] = [spell_counts(tables[m])["retaken"] for m in out.table_mib]
    return out


def _floor_interval(b: pd.DataFrame) -> pd.DataFrame:
    if "best_over_floor" not in b or "_floor_ratios" not in b:
        return b.drop(columns=["_floor_ratios"], errors="ignore")
    n = b["n_repeats"].copy()
    b = add_interval(b, "best_over_floor", list(b["_floor_ratios"]))
    b["n_repeats"] = n
    return b.drop(columns="_floor_ratios")


KENLM = "kenlm-cpp"  # rows of KenLM's own probing_hash_table_benchmark, run beside ours (bench mokry_hash --kenlm-peer)


LIKE = "like for like (headline)"
BEST = "best design of ours"
MOKRY = "Mokry's layout"
VS_COLUMNS = ["table_mib", "comparison", "variant", "queue_sizes", "queue_size", "cpu_ns_per_lookup",
              "kenlm_queue_sizes", "kenlm_queue_size", "kenlm_cpu_ns_per_lookup", "clock", "threads",
              "vs_kenlm_benchmark", "vs_kenlm_benchmark_paired", "vs_kenlm_benchmark_ci_low",
              "vs_kenlm_benchmark_ci_high", "n_repeats", "note"]
REMEASURE = ("re-measure: our rows predate the CPU clock (no cpu_ns_per_lookup); KenLM's rows are CPU time, ours "
             "wall time, so no ratio")


def _sizes(qs) -> str:
    return "/".join(str(int(q)) for q in sorted(qs))


#: the vs_kenlm rows' fixed count points (smtbench.counts): a 64 MiB table (8x the simulated LL), queue 16 on both sides
COUNT_POINTS = {"like for like (headline)": ("hash-keys-64mib-q16", "kenlm-hash-64mib-q16"),
                "Mokry's layout": ("hash-kv-64mib-q16", "kenlm-hash-64mib-q16")}


def with_counts(table: pd.DataFrame, counts_csv: str | None) -> pd.DataFrame:
    """The vs_kenlm table with the count columns beside its ratio (:func:`common.with_counts`)."""
    return _with_counts(table, counts_csv, lambda r: COUNT_POINTS.get(r["comparison"]),
                        after="vs_kenlm_benchmark_ci_high")


def vs_kenlm(rows: pd.DataFrame) -> pd.DataFrame:
    """Ours against KenLM's own hash benchmark run beside ours (``--kenlm-peer``), per table size: one thread's
    misses, both sides by CPU time (KenLM's CPUTime(); ours: the lookup thread's CPU time over the same loop), paired
    per repeat of the same run. Three labelled rows: (1) ``like for like (headline)``: our ``keys`` layout (8-byte
    keys, as KenLM's) at KenLM's queue sizes (those of its 0/2/4/8/16 that ours swept), each side's best of those
    sizes (per repeat for the interval, min over repeats for the ratio column); (2) ``best design of ours``: the
    variant whose best queue of all ours swept is fastest (by CPU time), at that queue; (3) ``Mokry's layout``
    (``kv``, 16-byte key+value) at its best queue. Rows (2) and (3) divide by KenLM's best of all its sizes (the
    same KenLM point as (1) wherever ours swept all of KenLM's sizes). Rows of ours without CPU times (before the
    clock was recorded) keep the row, its ratio blank (``note``: re-measure). No row where KenLM's benchmark did not
    run; multi-thread rows of ours are not compared (KenLM's benchmark runs one thread)."""
    rows = with_variant(rows)
    if KENLM not in set(rows["variant"]):
        return pd.DataFrame(columns=VS_COLUMNS)
    r = kept(rows.assign(queue_size=rows["queue_size"].fillna(0).astype(int)))
    r = r[r["mode"] == "miss"]
    if "threads" in r:
        r = r[r["threads"].fillna(1) == 1]
    if "cpu_ns_per_lookup" not in r:
        r = r.assign(cpu_ns_per_lookup=float("nan"))
    if "clock" in r:  # rows timed by a CPU clock only (KenLM's, before they said so twice): that is their CPU time
        r = r.assign(cpu_ns_per_lookup=r["cpu_ns_per_lookup"].where(r["clock"] != CPU, r["ns_per_lookup"]))
    out: list[dict] = []
    per: list[list[float]] = []
    for mib, g in r.groupby("table_mib"):
        ken = g[g.variant == KENLM]
        ours = g[g.variant != KENLM]
        if ken.empty or ours.empty:
            continue
        ken_qs = sorted(set(ken.queue_size))
        timed = ours["cpu_ns_per_lookup"].notna().all()
        # the value each side is read by: CPU time (ours from cpu_ns_per_lookup, their clock then 'cpu')
        g = g.assign(clock=[CPU if v != KENLM and timed else c
                            for v, c in zip(g.variant, g["clock"] if "clock" in g else ["wall"] * len(g))])
        by = "cpu_ns_per_lookup" if timed else "ns_per_lookup"  # choosing the best design: by CPU where recorded
        best_at = ours.groupby(["variant", "queue_size"])[by].min()
        specs = []
        keys_qs = [q for q in ken_qs if ("keys", q) in best_at.index]
        if keys_qs:
            specs.append((LIKE, "keys", keys_qs, keys_qs))
        if len(best_at):
            v, q = best_at.idxmin()
            specs.append((BEST, v, [q], ken_qs))
        kv = best_at[best_at.index.get_level_values(0) == PAPER_VARIANT]
        if len(kv):
            specs.append((MOKRY, PAPER_VARIANT, [kv.idxmin()[1]], ken_qs))
        for label, v, qs, kqs in specs:
            num = ((g.variant == v) & g.queue_size.isin(qs)).to_numpy()
            den = ((g.variant == KENLM) & g.queue_size.isin(kqs)).to_numpy()
            k = g[den].groupby("queue_size")["cpu_ns_per_lookup"].min()
            o = g[num].groupby("queue_size")["cpu_ns_per_lookup"].min()
            swept = sorted(set(ours[ours.variant == v].queue_size))
            row = dict(table_mib=mib, comparison=label, variant=v,
                       queue_sizes=_sizes(qs) if label == LIKE else f"its best of ours' {len(swept)} sizes "
                                                                   f"{min(swept)}-{max(swept)}: {int(qs[0])}",
                       queue_size=int(o.idxmin()) if o.notna().any() else None,
                       cpu_ns_per_lookup=o.min(), kenlm_queue_sizes=_sizes(kqs), kenlm_queue_size=int(k.idxmin()),
                       kenlm_cpu_ns_per_lookup=k.min(), clock=CPU, threads=1, vs_kenlm_benchmark=float("nan"),
                       note="" if timed else REMEASURE + ("" if label == LIKE else "; layout and queue chosen by "
                                                           "the wall clock"))
            pairs = None
            if timed:  # check_like: one run, one thread count, one clock on both sides, or refused
                pairs = _pairs(VS_KENLM, g, pd.Series(num, index=g.index), pd.Series(den, index=g.index),
                               f"{v} vs {KENLM}, {mib} MiB, misses, 1 thread")
                if pairs is not None:
                    row["vs_kenlm_benchmark"] = k.min() / o.min()
            per.append(pairs or [])
            out.append(row)
    if not out:
        return pd.DataFrame(columns=VS_COLUMNS)
    t = add_interval(pd.DataFrame(out), "vs_kenlm_benchmark", per)
    t["queue_size"] = t["queue_size"].astype("Int64")
    return t[[c for c in VS_COLUMNS if c in t]]


def layouts(rows: pd.DataFrame, threads: int = 1) -> pd.DataFrame:
    """Every layout variant at every table size of 1 GiB and more (all sizes if none is that large), misses and
    hits: plain and best-queue ns per lookup, lines per lookup, the one-random-line floor measured over the same
    table in the same run, and the best ns over that floor. Variant ``keys`` is KenLM's benchmark protocol
    (util/probing_hash_table_benchmark_main.cc: 8-byte keys, multiplier 1.5, queues 2/4/8/16); ``kv`` is Mokry's.
    ``clock``: what a row's times are (ours: wall; KenLM's own benchmark, where it ran: CPU); no ratio crosses rows
    (the comparison with KenLM is vs_kenlm's table)."""
    b = best_speedups(rows, variant=None)
    b = b[b.threads == threads]
    big = b[b.table_mib >= 1024]
    b = big if len(big) else b
    b = b.assign(best_over_floor=b.best_ns / b.line_floor_ns) if "line_floor_ns" in b else b
    b = _floor_interval(b)
    r = with_variant(rows)
    clocks = (r.assign(clock=r["clock"].fillna("wall")) if "clock" in r else r.assign(clock="wall"))
    clocks = clocks.groupby("variant")["clock"].agg(lambda c: "/".join(sorted(set(c))))
    b = b.assign(clock=b.variant.map(clocks).fillna("wall"))
    keep = [c for c in ("table_mib", "variant", "mode", "clock", "plain_ns", "best_ns", "best_queue_size", "speedup",
                        "speedup_paired", "speedup_ci_low", "speedup_ci_high", "lines_per_lookup", "line_floor_ns",
                        "best_over_floor", "best_over_floor_paired", "best_over_floor_ci_low",
                        "best_over_floor_ci_high", "load1_max", "n_repeats", "retaken_repeats") if c in b]
    order = {v: i for i, v in enumerate(["kv", "keys", "kv-line", "kv-line-ovf", "split", "split-pf",
                                                   "split-ovf", "split-ovf-pf", KENLM])}
    b = b.assign(_o=b.variant.map(lambda v: (order.get(v.split(":")[0], 9), v)))
    return b.sort_values(["table_mib", "mode", "_o"])[keep].reset_index(drop=True)


def table3_2(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 3.2 at the largest table measured: ours (misses and hits) beside the thesis (137 GB table)."""
    best = best_speedups(rows)
    largest = int(best.table_mib.max())
    best = best[best.table_mib == largest]
    wide = None
    for mode in ("miss", "hit"):
        keep = [c for c in ("plain_ns", "best_ns", "best_queue_size", "speedup", "speedup_paired", "speedup_ci_low",
                            "speedup_ci_high", "lines_per_lookup") if c in best]
        part = best[best["mode"] == mode].set_index("threads")[keep]
        part.columns = [f"{mode}_{c}" for c in part.columns]
        wide = part if wide is None else wide.join(part, how="outer")
    assert wide is not None
    if "line_floor_ns" in best:
        wide = wide.join(best.groupby("threads")["line_floor_ns"].first())
    wide = wide.join(best.groupby("threads")[["n_repeats", "retaken_repeats"]].max())
    wide = wide.reset_index()
    paper = paper_values("mokry2016", "table3_2")
    paper["threads"] = paper["key"].str.removeprefix("threads=").astype(int)
    paper = paper.drop(columns="key")
    out = wide.merge(paper, on="threads", how="outer").sort_values("threads")
    out.insert(0, "table_mib", largest)
    out["n_repeats"] = out["n_repeats"].astype("Int64")
    out["retaken_repeats"] = out["retaken_repeats"].astype("Int64")
    return out.reset_index(drop=True)


def fig3_2(rows: pd.DataFrame, threads: int = 1):
    """Time per lookup against queue size (0 = plain), one line per table size; misses and hits."""
    pts = per_point(rows)
    pts = pts[(pts.threads == threads) & (pts.variant == PAPER_VARIANT)]
    modes = [m for m in ("miss", "hit") if m in set(pts["mode"])]
    fig, axes = plt.subplots(1, len(modes), figsize=(5.5 * len(modes), 4), sharey=True, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for mib, g in pts[pts["mode"] == mode].groupby("table_mib"):
            g = g.sort_values("queue_size")
            label = f"{mib / 1024:g} GiB" if mib >= 1024 else f"{mib} MiB"
            line, = ax.plot(g.queue_size, g.ns_min, marker="o", ms=3, label=label)
            ax.fill_between(g.queue_size, g.ns_min, g.ns_max, color=line.get_color(), alpha=0.15, lw=0)
        ax.set_title(f"{ {'miss': 'misses', 'hit': 'hits'}[mode]}, {threads} thread(s)")
        ax.set_xlabel("prefetch queue size (0 = plain lookup)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("ns per lookup (min of repeats; band: min-max)")
    axes[0][-1].legend(title="table size")
    fig.suptitle("Mokry Fig 3.2 reproduced: time per lookup vs in-flight prefetches")
    return fig


def fig_layouts(rows: pd.DataFrame, threads: int = 1):
    """Time per lookup against queue size at the largest table, one line per layout variant; misses and hits, the
    one-random-line floor dashed."""
    rows = with_variant(rows)
    largest = int(rows.table_mib.max())
    rows = rows[rows.table_mib == largest]
    pts = per_point(rows)
    pts = pts[pts.threads == threads]
    floor = rows[(rows["mode"] == "line") & (rows.threads == threads)].ns_per_lookup.min()
    modes = [m for m in ("miss", "hit") if m in set(pts["mode"])]
    fig, axes = plt.subplots(1, len(modes), figsize=(5.5 * len(modes), 4), sharey=True, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for v, g in pts[pts["mode"] == mode].groupby("variant"):
            g = g.sort_values("queue_size")
            ax.plot(g.queue_size, g.ns_min, marker="o", ms=3, label=v + (" (Mokry)" if v == PAPER_VARIANT else
                                                                           " (KenLM bench)" if v == "keys" else ""))
        if floor == floor:
            ax.axhline(floor, ls="--", color="grey", label="one random line")
        ax.set_title(f"{ {'miss': 'misses', 'hit': 'hits'}[mode]}, {threads} thread(s)")
        ax.set_xlabel("prefetch queue size (0 = plain lookup)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("ns per lookup (min of repeats; band: min-max)")
    axes[0][-1].legend(title="layout")
    label = f"{largest / 1024:g} GiB" if largest >= 1024 else f"{largest} MiB"
    fig.suptitle(f"Hash-table layouts, {label} of 16-byte key+value buckets (keys: 8-byte), load 2/3")
    return fig


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench mokry_hash` rows. exact per (table size, mode): the lookup checksum of hits and misses (found values, or
    the key of a miss: independent of layout, thread count, queue size and fill order). Mode 'line' (random line
    reads, the machine's floor) is left out: it folds whatever the lines hold, and the table is filled by several
    threads, so it differs from run to run. ratio: best prefetch-queue speed-up per (table size, mode, threads),
    and per layout variant other than Mokry's (key suffixed with the variant)."""
    recs: list[metrics.Record] = []
    for r in best_speedups(rows, variant=None).itertuples():
        suffix = "" if r.variant == PAPER_VARIANT else f",{r.variant}"
        recs += metrics.ratios("mokry_hash", f"mib={r.table_mib},{r.mode},t={r.threads}{suffix}",
                               {"speedup": r.speedup}, r)
    lookups = rows[rows["mode"].isin(["hit", "miss"])]
    for (mib, mode), g in lookups.groupby(["table_mib", "mode"]):
        recs.append(("mokry_hash", f"mib={mib},{mode}", "checksum", metrics.distinct(g.checksum), "exact"))
    return recs


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report mokry_hash`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("mokry_hash",
         help="Mokry Table 3.2 and Fig 3.2 (and smoke metrics) from hash rows",
         settings=(
             arg("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench mokry_hash`"),
             arg("--table", help="output stem for Table 3.2 (.csv and .md)"),
             arg("--figure", help="output PNG for Fig 3.2"),
             arg("--layouts-table", help="output stem for the layout table (.csv and .md)"),
             arg("--layouts-figure", help="output PNG: ns per lookup against queue size per layout"),
             arg("--vs-kenlm-table", help="output stem for ours against KenLM's hash benchmark (.csv and .md)"),
             arg("--metrics", help="output CSV of regression metrics"),
             counts_arg(),
         )),
)


def main(args: argparse.Namespace) -> int:
    from .common import check_counts, COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows, "mokry_hash")
    check_counts(args.counts)  # a bad --counts stops here, before any output (or folder) is made
    if args.table:
        t = table3_2(rows)
        write_table(t, args.table, "Mokry 2016 Table 3.2: best prefetch-queue speed-up per thread count",
                    notes=f"Ours: linear-probing table of {int(t.table_mib.iloc[0])} MiB (16-byte entries, load 2/3), "
                          "min over repeats, speed-up = plain ns / best-queue ns from the same run; lines_per_lookup = mean "
                          "distinct 64-byte lines a lookup touches; line_floor_ns = independent random line reads over "
                          "the same memory (this machine's memory-level-parallelism floor per line). "
                          "paper_*: the thesis' 137 GB table, misses (Mokry 2016, Table 3.2). " + INTERVAL_NOTE)
    if args.figure:
        save_figure(fig3_2(rows), args.figure)
    if args.layouts_table:
        write_table(layouts(rows), args.layouts_table,
                    "Hash-table layouts beside Mokry's table: KenLM's benchmark protocol, line-aligned and split",
                    notes="One thread, min over repeats of interleaved points; every variant holds the same entries "
                          "in the same number of buckets (load 2/3; 'keys' = 8-byte key-only buckets, as KenLM's "
                          "util/probing_hash_table_benchmark_main.cc, so half the bytes). lines_per_lookup = mean "
                          "distinct 64-byte lines a lookup touches (untimed, 1M queries; split layouts count the "
                          "value line of a hit); line_floor_ns = independent random line reads over the same table "
                          "in the same run; best_over_floor = best ns / that floor. ':nohuge' = plain 4 KiB pages. "
                          "clock: what the row's times are - ours the wall clock; kenlm-cpp (where run: KenLM's own "
                          "util/probing_hash_table_benchmark beside ours in every repeat) its CPUTime(), CPU time: no "
                          "ratio crosses the two here, the comparison with KenLM is the mokry_hash_vs_kenlm table, "
                          "CPU time against CPU time. " + INTERVAL_NOTE)
    if args.vs_kenlm_table:
        write_table(with_counts(vs_kenlm(rows), args.counts), args.vs_kenlm_table,
                    "Hash lookups against KenLM's own probing_hash_table_benchmark: like for like, best design, "
                    "Mokry's layout",
                    notes="One thread's random misses, the table of the same bucket count (load 2/3), KenLM's "
                          "benchmark run as a process beside our points in every repeat of the same run "
                          "(tools/kenlm-probing-benchmark.patch gives it a one-size mode and changes nothing else). "
                          "clock = cpu on both sides: KenLM's benchmark reads only its CPUTime() "
                          "(CLOCK_PROCESS_CPUTIME_ID of its one-thread process, around its queue's adds and drain); "
                          "ours is the lookup thread's CPU time (CLOCK_THREAD_CPUTIME_ID) around the same loop "
                          "(cpu_ns_per_lookup of our rows; their ns_per_lookup elsewhere is the wall clock). "
                          "'like for like (headline)': our 'keys' layout (8-byte keys, as KenLM's; its queue "
                          "prefetches the ideal bucket's line and the next, KenLM's the first) at KenLM's "
                          "queue sizes (0 = Immediate, 2/4/8/16: those ours swept), each side's best of the same "
                          "sizes - in each repeat for the interval, over all repeats for vs_kenlm_benchmark. "
                          "'best design of ours': the layout and queue size (of all ours swept) with the lowest CPU "
                          "time, at that queue, against KenLM's best of its sizes; 'Mokry's layout': kv (16-byte "
                          "key+value entries) at its best queue, likewise. vs_kenlm_benchmark = KenLM's ns / ours "
                          "(> 1: ours faster). Our multi-thread rows are not compared (KenLM's benchmark runs one "
                          "thread). note 're-measure': rows of ours recorded before the CPU clock (no "
                          "cpu_ns_per_lookup): KenLM's CPU time has no like partner, the ratio stays blank until "
                          "the default profile re-measures. " + INTERVAL_NOTE
                          + (" " + COUNT_NOTE if args.counts else ""))
    if args.layouts_figure:
        save_figure(fig_layouts(rows), args.layouts_figure)
    if args.metrics:
        metrics.write(regression_metrics(rows), args.metrics)
    return 0
