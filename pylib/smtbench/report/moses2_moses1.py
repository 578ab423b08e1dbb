"""The Moses2 paper's Figs 1, 2 and 10 from `bench moses2_moses1` rows (the live Moses v1): decoding time with its
phrase-table implementations (Fig 1), with its lexicalized-reordering implementations (Fig 2), and words per second
against threads (Fig 10). The paper's figures carry no numbers; its text's statements about them are rows of
resources/paper_values.csv (fast_scalable fig1/fig2/fig10) and are shown beside ours as paper_* columns."""
from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import pandas as pd

from ..moses_peer import NOT_BUILT
from ..protocol import kept
from .common import Ratio, add_interval, declare, paper_values, point_mask, ratio_pairs
from . import metrics
from ..experiments.frame import Verb, arg

# the declarations (report.common.declare): Moses v1 against itself in one run - a table storage against the text
# table in memory at the same thread count, and its thread scaling (threads differ by design)
VS_MEMORY = Ratio("speedup_vs_memory", num="the row's table storage", den="the text table in memory, same threads")
VS_1 = Ratio("speedup_vs_1", num="the row's thread count", den="1 thread, same storage", same=("run_id", "clock"))
declare("moses2_fig1", VS_MEMORY)
declare("moses2_fig2", VS_MEMORY)
declare("moses2_fig10", VS_1)

POINT = ["model", "phrase_table", "reordering", "threads"]
LABEL = {"memory": "in-memory text", "probing": "probing (CreateProbingPT)", "compact": "compact (cmph)",
         "tree": "binarized tree (processLexicalTable)"}


def _status(rows: pd.DataFrame) -> pd.Series:
    return rows["status"] if "status" in rows else pd.Series([None] * len(rows), index=rows.index)


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    """Timed points: min and median decoding seconds over repeats, words/s from the min, the loading-only run's
    median, and the most 1-best lines any repeat had different from the model's reference variant."""
    t = kept(rows[_status(rows).isna()])  # attempts retaken in a slow spell are left out
    if t.empty:
        return pd.DataFrame(columns=POINT + ["decode_min_s", "decode_median_s", "words_per_second",
                                             "load_median_s", "lines_differing", "repeats"])
    g = t.groupby(POINT)
    out = g.agg(decode_min_s=("decode_seconds", "min"), decode_median_s=("decode_seconds", "median"),
                load_median_s=("load_seconds", "median"), words_timed=("words_timed", "first"),
                sentences=("sentences", "first"), lines_differing=("lines_differing_from_reference", "max"),
                repeats=("decode_seconds", "count")).reset_index()
    out["words_per_second"] = out.words_timed / out.decode_min_s
    return out


def _per_repeat(rows: pd.DataFrame, fast: dict, slow: dict, ratio: Ratio) -> list[float]:
    """slow / fast decoding seconds per repeat (points given as POINT dicts), paired within the run's repeats, after
    report.common.check_like."""
    t = rows[_status(rows).isna()]
    if t.empty:
        return []
    return ratio_pairs(ratio, t, point_mask(t, fast), point_mask(t, slow), value="decode_seconds",
                       where=f"moses2_moses1, {fast}") or []


def _not_built(rows: pd.DataFrame) -> pd.DataFrame:
    nb = rows[_status(rows).notna()]
    if nb.empty:
        return nb
    return nb[POINT + ["status", "missing"]].drop_duplicates()


def _main_model(rows: pd.DataFrame) -> str:
    return str(rows.model.iloc[0])


def _with_paper(df: pd.DataFrame, fig: str) -> pd.DataFrame:
    pv = paper_values("fast_scalable", fig)
    pv = pv.rename(columns={"key": "paper_key"})
    # one block of the paper's statements under the table (they are about the figure, not a row)
    return pd.concat([df, pv], ignore_index=True)


def _storage_table(rows: pd.DataFrame, vary: str, fixed: str, fixed_value: str, fig: str) -> pd.DataFrame:
    """One model's points varying ``vary`` (phrase_table or reordering) with ``fixed`` held at fixed_value (or the
    first measured value), per thread count; speedup_vs_memory = the text table's time / this time (same run)."""
    pts = per_point(rows)
    model = _main_model(rows)
    out, per = [], []
    for m in [model] + [x for x in rows.model.unique() if x != model]:
        q = pts[pts.model == m]
        fv = fixed_value if (q[fixed] == fixed_value).any() or q.empty else q[fixed].iloc[0]
        q = q[q[fixed] == fv]
        for r in q.sort_values(["threads", vary]).itertuples():
            mem = q[(q.threads == r.threads) & (q[vary] == "memory")]
            out.append({"model": m, vary: r._asdict()[vary], fixed: fv, "threads": int(r.threads),
                        "decode_min_s": r.decode_min_s, "decode_median_s": r.decode_median_s,
                        "words_per_second": r.words_per_second, "load_median_s": r.load_median_s,
                        "speedup_vs_memory": (float(mem.decode_min_s.iloc[0]) / r.decode_min_s) if len(mem)
                        else float("nan"),
                        "lines_differing": int(r.lines_differing), "repeats": int(r.repeats),
                        "status": "measured"})
            pt = {"model": m, vary: r._asdict()[vary], fixed: fv, "threads": r.threads}
            per.append(_per_repeat(rows, pt, {**pt, vary: "memory"}, VS_MEMORY) if len(mem) else [])
    nb = _not_built(rows)
    if len(nb):
        nb = nb[nb[fixed] == fixed_value] if (nb[fixed] == fixed_value).any() else nb
        for r in nb.drop_duplicates(["model", vary, "threads"]).itertuples():
            d = r._asdict()
            out.append({"model": d["model"], vary: d[vary], fixed: d[fixed], "threads": int(d["threads"]),
                        "status": f"{NOT_BUILT}: {d['missing']}"})
            per.append([])
    df = pd.DataFrame(out)
    if len(df) and "speedup_vs_memory" in df:
        df = _status_last(add_interval(df, "speedup_vs_memory", per))
    return _with_paper(df, fig)


def _status_last(df: pd.DataFrame) -> pd.DataFrame:
    """n_repeats (added by add_interval) beside repeats, status after them."""
    cols = [c for c in df.columns if c != "status"] + ["status"]
    return df[cols]


def fig1(rows: pd.DataFrame) -> pd.DataFrame:
    """Moses' decoding time per phrase-table implementation (text reordering table), per thread count."""
    return _storage_table(rows, "phrase_table", "reordering", "memory", "fig1")


def fig2(rows: pd.DataFrame) -> pd.DataFrame:
    """Moses' decoding time per lexicalized-reordering implementation (probing phrase table, as the paper's
    setup), per thread count."""
    return _storage_table(rows, "reordering", "phrase_table", "probing", "fig2")


def fig10(rows: pd.DataFrame) -> pd.DataFrame:
    """Moses' words per second against threads, every storage combination; speedup_vs_1 within the combination."""
    pts = per_point(rows)
    out, per = [], []
    for (m, pt, lr), q in pts.groupby(["model", "phrase_table", "reordering"]):
        one = q[q.threads == 1]
        for r in q.sort_values("threads").itertuples():
            out.append({"model": m, "phrase_table": pt, "reordering": lr, "threads": int(r.threads),
                        "words_per_second": r.words_per_second, "decode_min_s": r.decode_min_s,
                        "speedup_vs_1": (float(one.decode_min_s.iloc[0]) / r.decode_min_s) if len(one)
                        else float("nan"), "status": "measured"})
            p = {"model": m, "phrase_table": pt, "reordering": lr, "threads": r.threads}
            per.append(_per_repeat(rows, p, {**p, "threads": 1}, VS_1) if len(one) else [])
    nb = _not_built(rows)
    for r in nb.itertuples():
        d = r._asdict()
        out.append({"model": d["model"], "phrase_table": d["phrase_table"], "reordering": d["reordering"],
                    "threads": int(d["threads"]), "status": f"{NOT_BUILT}: {d['missing']}"})
        per.append([])
    df = pd.DataFrame(out)
    if len(df) and "speedup_vs_1" in df:
        df = _status_last(add_interval(df, "speedup_vs_1", per))
    return _with_paper(df, "fig10")


def _no_data(ax, rows: pd.DataFrame) -> None:
    nb = _not_built(rows)
    msg = f"Moses v1: {NOT_BUILT}" if len(nb) else "no measured point"
    ax.text(0.5, 0.5, msg, transform=ax.transAxes, ha="center", va="center")


def figure(rows: pd.DataFrame, which: str):
    """Fig 1 / Fig 2: decoding seconds against threads, one line per storage; Fig 10: words/s against threads."""
    pts = per_point(rows)
    pts = pts[pts.model == _main_model(rows)] if len(pts) else pts
    fig, ax = plt.subplots(figsize=(5.5, 4))
    if which == "fig1":
        vary, fixed, fv, title = "phrase_table", "reordering", "memory", "Moses v1: phrase-table implementations"
    elif which == "fig2":
        vary, fixed, fv, title = "reordering", "phrase_table", "probing", \
            "Moses v1: lexicalized-reordering implementations"
    else:
        vary, fixed, fv, title = None, None, None, "Moses v1 decoding speed"
    if pts.empty:
        _no_data(ax, rows)
    elif vary:
        q = pts[pts[fixed] == fv] if (pts[fixed] == fv).any() else pts[pts[fixed] == pts[fixed].iloc[0]]
        for v, g in q.groupby(vary):
            g = g.sort_values("threads")
            ax.plot(g.threads, g.decode_min_s, "o-", label=LABEL.get(v, v))
        ax.set_ylabel("decoding seconds (loading excluded, min)")
        ax.legend(fontsize=8)
    else:
        for (pt, lr), g in pts.groupby(["phrase_table", "reordering"]):
            g = g.sort_values("threads")
            ax.plot(g.threads, g.words_per_second, "o-", label=f"pt {pt}, reordering {lr}")
        ax.set_ylabel("words per second")
        ax.legend(fontsize=8)
    ax.set_xlabel("threads")
    ax.set_title(title, fontsize=10)
    if len(pts):
        ax.set_xticks(sorted(pts.threads.unique()))
    fig.tight_layout()
    return fig


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench moses2_moses1` rows (Moses v1). exact: the number of points of the grid (measured or not built: whether
    Moses v1 is built is the machine's business, not a regression), and per timed point the count of 1-best lines
    differing from the model's in-memory reference (Moses is deterministic; "new" where the baseline machine had no
    Moses v1). ratio: probing over in-memory phrase table, tree over in-memory reordering table, 2 over 1 threads."""
    out: list[metrics.Record] = []
    grid = rows.drop_duplicates(["model", "phrase_table", "reordering", "threads"])
    for m, g in grid.groupby("model"):
        out.append(("moses2_moses1", str(m), "points", str(len(g)), "exact"))
    for (m, pt, lr, th), g in rows.groupby(["model", "phrase_table", "reordering", "threads"]):
        k = f"{m}-pt{pt}-lr{lr}-t{int(th)}"
        if "lines_differing_from_reference" in g and g.lines_differing_from_reference.notna().any():
            out.append(("moses2_moses1", k, "lines_differing",
                        metrics.distinct(g.lines_differing_from_reference.dropna().astype(int)), "exact"))
    pts = per_point(rows)
    best = {tuple(r[:4]): r[4] for r in pts[POINT + ["decode_min_s"]].itertuples(index=False)}
    for m in pts.model.unique() if len(pts) else []:
        pairs = {}
        for th in sorted(pts.threads.unique()):
            a, b = best.get((m, "memory", "memory", th)), best.get((m, "probing", "memory", th))
            if a and b:
                pairs[f"probing_pt_speedup_t{int(th)}"] = a / b
            a, b = best.get((m, "probing", "memory", th)), best.get((m, "probing", "tree", th))
            if a and b:
                pairs[f"tree_lr_speedup_t{int(th)}"] = a / b
        a, b = best.get((m, "probing", "tree", 1)), best.get((m, "probing", "tree", 2))
        if a and b:
            pairs["threads_2_over_1"] = a / b
        out += metrics.ratios("moses2_moses1", str(m), pairs)
    return out


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report moses2_moses1`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("moses2_moses1",
         help="the Moses2 paper's Figs 1, 2, 10 (live Moses v1)",
         settings=(
             arg("--rows", nargs="+", required=True),
             arg("--tables", required=True, help="folder for moses2_fig{1,2,10}.{csv,md}"),
             arg("--figures", required=True, help="folder for moses2_fig{1,2,10}.png"),
             arg("--metrics", default=None,
                 help="regression metrics CSV (smtbench.report.moses2_moses1.regression_metrics)"),
         )),
)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path
    from .common import read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moses2_moses1")
    t, f = Path(args.tables), Path(args.figures)
    r0 = rows.iloc[0]
    cpu = f"{r0.machine_cpu}, {r0.machine_cores} cores" if "machine_cpu" in rows else "this machine"
    search = (f"cube pruning, pop limit {int(r0.pop_limit)}, -s {int(r0.stack_size)}" if r0.search == "cube"
              else f"normal search, -s {int(r0.stack_size)}")
    notes = (f"Moses v1 (`moses`, built by `make moses`), {search}, on the first {int(r0.sentences)} dev verses; "
             f"model `{r0.model}` first (the workflow's own: our alignment, tables and LM, `tm model`'s moses.ini, "
             f"filtered to the input), other models after it. Each variant is that moses.ini with one feature's "
             f"storage changed, the binary tables made from its text tables by Moses' own programs. Decoding time "
             f"= wall time of the whole input minus wall time of the same command on its first line (loading, "
             f"process start, one sentence), both in the same repeat; words/s over every line but the first; min "
             f"over interleaved repeats (median beside it) on {cpu}. lines_differing: 1-best lines that differ from "
             f"the model's in-memory/in-memory 1-thread run. paper_*: the paper's statements about its figure "
             f"(its figures carry no numbers; a 16-core/32-thread server, 800,000 Arabic-English sentences).")
    write_table(fig1(rows), t / "moses2_fig1",
                "Moses2 paper Fig 1: Moses decoding time with different phrase-table implementations", notes=notes)
    write_table(fig2(rows), t / "moses2_fig2",
                "Moses2 paper Fig 2: Moses decoding time with different lexicalized-reordering implementations",
                notes=notes)
    write_table(fig10(rows), t / "moses2_fig10", "Moses2 paper Fig 10: Moses decoding speed against threads",
                notes=notes)
    for which in ("fig1", "fig2", "fig10"):
        save_figure(figure(rows, which), f / f"moses2_{which}.png")
    if args.metrics:
        metrics.write(regression_metrics(rows), args.metrics)
    return 0
