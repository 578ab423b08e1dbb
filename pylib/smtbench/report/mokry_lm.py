"""Mokry 2016 §3.2: Table 3.3 (best automaton-queue speed-up and its queue size per model size) and
Fig 3.5 (time against prefetches in flight, one line per model), from `smtbench bench mokry_lm` rows."""
from __future__ import annotations

import argparse

import math

import matplotlib.pyplot as plt
import pandas as pd

from ..protocol import REGIME_COLUMNS, spell_counts
from .common import Ratio, add_interval, declare, move_last, paper_values, ratio_pairs
from . import metrics
from ..experiments.frame import Verb, arg, counts_arg

POINT = ["model", "backend", "queue_size"]


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    """Min and median ns/query over repeats per (model, backend, queue size); the thesis keeps the min."""
    rows = rows.copy()
    rows["queue_size"] = rows["queue_size"].fillna(-1).astype(int)
    if "retaken" in rows.columns:  # attempts a slow spell had retaken are kept in the rows, not counted
        rows = rows[rows["retaken"].fillna(False).astype(bool) == False]  # noqa: E712
    g = rows.groupby(POINT)
    out = g["ns_per_query"].agg(ns_min="min", ns_median="median", ns_max="max", repeats="count").reset_index()
    facts = g[["model_bytes", "order", "ngrams", "queries", "synthetic"]].first().reset_index()
    return out.merge(facts, on=POINT)


def best_speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model: our sequential ns, the best automaton ns and queue size, speed-up, the kenlm module's
    ns and our sequential speed against it (all mins over repeats of the same run)."""
    pts = per_point(rows)
    seq = pts[pts.backend == "sequential"].set_index("model")
    aut = pts[pts.backend == "automaton"]
    best = aut.loc[aut.groupby("model")["ns_min"].idxmin()].set_index("model")
    out = pd.DataFrame({
        "model_mb": seq["model_bytes"] / 1e6,
        "order": seq["order"],
        "ngrams": seq["ngrams"],
        "synthetic": seq["synthetic"].astype(bool),
        "queries": seq["queries"],
        "sequential_ns": seq["ns_min"],
        "best_automaton_ns": best["ns_min"],
        "best_queue_size": best["queue_size"],
    })
    out["speedup"] = out["sequential_ns"] / out["best_automaton_ns"]
    # KenLM's own C++ kenlm_benchmark (wall, min over repeats; the headline peers) and the Python module
    for kind in ("probing", "trie"):
        k = pts[pts.backend == f"kenlm-{kind}-cpp"].set_index("model")
        if len(k):
            out[f"kenlm_{kind}_cpp_ns"] = k["ns_min"].reindex(out.index)
            out[f"kenlm_{kind}_cpp_mb"] = (k["model_bytes"] / 1e6).reindex(out.index)
    if "kenlm_probing_cpp_ns" in out:
        out["sequential_vs_kenlm_probing_cpp"] = out["kenlm_probing_cpp_ns"] / out["sequential_ns"]
        out["automaton_vs_kenlm_probing_cpp"] = out["kenlm_probing_cpp_ns"] / out["best_automaton_ns"]
    # the same LM probed from each n-gram's cache line (backends sequential-line / automaton-line), when measured
    seq_line = pts[pts.backend == "sequential-line"].set_index("model")["ns_min"]
    aut_line = pts[pts.backend == "automaton-line"]
    if len(seq_line) or len(aut_line):
        out["sequential_line_ns"] = seq_line.reindex(out.index)
        if len(aut_line):
            best_line = aut_line.loc[aut_line.groupby("model")["ns_min"].idxmin()].set_index("model")
            out["best_automaton_line_ns"] = best_line["ns_min"].reindex(out.index)
            out["best_line_queue_size"] = best_line["queue_size"].reindex(out.index).astype("Int64")
        if "kenlm_probing_cpp_ns" in out:
            out["sequential_line_vs_kenlm_probing_cpp"] = out["kenlm_probing_cpp_ns"] / out["sequential_line_ns"]
            if "best_automaton_line_ns" in out:
                out["automaton_line_vs_kenlm_probing_cpp"] = out["kenlm_probing_cpp_ns"] / out["best_automaton_line_ns"]
    # the same LM and walk, every order's bucket requested when a query starts (backend sequential-pf), when measured
    seq_pf = pts[pts.backend == "sequential-pf"].set_index("model")["ns_min"]
    if len(seq_pf):
        out["sequential_pf_ns"] = seq_pf.reindex(out.index)
        if "kenlm_probing_cpp_ns" in out:
            out["sequential_pf_vs_kenlm_probing_cpp"] = out["kenlm_probing_cpp_ns"] / out["sequential_pf_ns"]
    km = pts[pts.backend == "kenlm-module"].set_index("model")["ns_min"]
    out["kenlm_module_ns"] = km.reindex(out.index)
    out["sequential_vs_kenlm"] = out["kenlm_module_ns"] / out["sequential_ns"]  # the Python module, as labelled
    out = out.reset_index().sort_values("model_mb")
    out["best_queue_size"] = out["best_queue_size"].astype("Int64")
    return with_intervals(out, rows)


# each measured ratio of Table 3.3: (column, faster point, slower point); a point is (backend, column holding its
# queue size or None); the ratio of every repeat is time(slower) / time(faster) of that repeat's paired rows
RATIOS = [
    ("speedup", ("automaton", "best_queue_size"), ("sequential", None)),
    ("sequential_vs_kenlm_probing_cpp", ("sequential", None), ("kenlm-probing-cpp", None)),
    ("automaton_vs_kenlm_probing_cpp", ("automaton", "best_queue_size"), ("kenlm-probing-cpp", None)),
    ("sequential_line_vs_kenlm_probing_cpp", ("sequential-line", None), ("kenlm-probing-cpp", None)),
    ("automaton_line_vs_kenlm_probing_cpp", ("automaton-line", "best_line_queue_size"), ("kenlm-probing-cpp", None)),
    ("sequential_pf_vs_kenlm_probing_cpp", ("sequential-pf", None), ("kenlm-probing-cpp", None)),
    ("sequential_vs_kenlm", ("sequential", None), ("kenlm-module", None)),
]


_NAMES = {"automaton": "our automaton (best queue)", "sequential": "our sequential path",
          "kenlm-probing-cpp": "KenLM's probing model, kenlm_benchmark -t 1", "kenlm-module": "the kenlm module",
          "sequential-line": "our sequential path, line-probed", "automaton-line": "our automaton, line-probed",
          "sequential-pf": "our sequential path, all orders prefetched"}
# the declarations (report.common.declare): every ratio of Table 3.3 divides rows of one run, clock, thread count
DECLARED = {name: Ratio(name, num=_NAMES[fast[0]], den=_NAMES[slow[0]]) for name, fast, slow in RATIOS}
declare("mokry_table3_3", *DECLARED.values())


def with_intervals(out: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Every measured ratio's 95% interval over the run's paired repeats (smtbench.protocol), n_repeats, and how many
    repeats a slow spell had retaken (0 for rows from before the protocol)."""
    rows = rows.copy()
    rows["queue_size"] = rows["queue_size"].fillna(-1).astype(int)

    def mask(m: pd.DataFrame, row: pd.Series, point: tuple[str, str | None]) -> pd.Series:
        backend, qcol = point
        sel = m["backend"] == backend
        if qcol is not None:
            q = row.get(qcol)
            sel &= m["queue_size"] == (int(q) if q is not None and q == q and q is not pd.NA else -2)
        return sel

    by_model = {k: v for k, v in rows.groupby("model")}
    for name, fast, slow in RATIOS:
        if name not in out.columns:
            continue
        per_row = []
        for _, row in out.iterrows():
            m = by_model[row["model"]]
            per_row.append(ratio_pairs(DECLARED[name], m, mask(m, row, fast), mask(m, row, slow), value="ns_per_query",
                                       where=f"mokry_table3_3 ({row['model']})"))
        out[name] = [v if r is not None else math.nan for v, r in zip(out[name], per_row)]
        out = add_interval(out, name, [r or [] for r in per_row])
    if "n_repeats" not in out.columns:
        out["n_repeats"] = 0
    spells = [spell_counts(by_model[m]) for m in out["model"]]
    out["retaken_repeats"] = [c["retaken"] for c in spells]
    out["spell_probe_ns"] = [c["probe_ns"] for c in spells]
    for k in REGIME_COLUMNS:  # rows with a working-set probe (smtbench.protocol, machine regime)
        if any(k in c for c in spells):
            out[k] = [c.get(k, math.nan) for c in spells]
    return move_last(out, ["n_repeats", "retaken_repeats", "spell_probe_ns", *REGIME_COLUMNS])


#: Table 3.3's fixed count points (smtbench.counts): the automaton at queue 8 and KenLM's probing model, on the
#: Moses oracle's English 5-gram (lm-en5, the Bible's English like bible.o5) and its dev.en queries
COUNT_POINTS = {"bible.o5": ("lm-o5-automaton-q8", "kenlm-probing-o5")}


def with_counts(table: pd.DataFrame, counts_csv: str | None) -> pd.DataFrame:
    """Table 3.3 with the count columns beside the automaton's ratio to KenLM (:func:`common.with_counts`)."""
    from .common import with_counts as _with_counts

    return _with_counts(table, counts_csv, lambda r: COUNT_POINTS.get(r["model"]),
                        after="automaton_vs_kenlm_probing_cpp_ci_high")


def table3_3(rows: pd.DataFrame) -> pd.DataFrame:
    """Ours per model size; beside each, the thesis row of the nearest model size (log scale)."""
    ours = best_speedups(rows)
    paper = paper_values("mokry2016", "table3_3")
    paper["paper_model_mb"] = paper["key"].str.removeprefix("model_mb=").astype(float)
    paper = paper.drop(columns="key").sort_values("paper_model_mb").reset_index(drop=True)
    idx = [min(range(len(paper)), key=lambda i: abs(math.log(paper.paper_model_mb[i]) - math.log(mb)))
           for mb in ours.model_mb]
    near = paper.iloc[idx].reset_index(drop=True)
    out = pd.concat([ours.reset_index(drop=True), near[["paper_model_mb", "paper_speedup", "paper_queue_size",
                                                        "paper_citation"]]], axis=1)
    out["paper_queue_size"] = out["paper_queue_size"].astype("Int64")
    return out


def fig3_5(rows: pd.DataFrame):
    """ns per query against prefetches in flight (automaton queue size); the sequential path at 0."""
    pts = per_point(rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    order = pts.groupby("model")["model_bytes"].first().sort_values()
    for model in order.index:
        p = pts[pts.model == model]
        aut = p[p.backend == "automaton"].sort_values("queue_size")
        seq = p[p.backend == "sequential"]
        mb = order[model] / 1e6
        syn = " (synthetic)" if bool(p.synthetic.iloc[0]) else ""
        line, = ax.plot(aut.queue_size, aut.ns_min, marker="o", ms=3, label=f"{model}: {mb:,.0f} MB{syn}")
        ax.fill_between(aut.queue_size, aut.ns_min, aut.ns_max, color=line.get_color(), alpha=0.15, lw=0)
        if not seq.empty:
            ax.plot([0], seq.ns_min, marker="s", color=line.get_color())
            ax.axhline(float(seq.ns_min.iloc[0]), color=line.get_color(), lw=0.6, ls=":")
        pf = p[p.backend == "sequential-pf"]
        if not pf.empty:  # the sequential walk with every order's bucket requested at the query's start
            ax.plot([0], pf.ns_min, marker="^", color=line.get_color(), mfc="none")
        kp = p[p.backend == "kenlm-probing-cpp"]
        if not kp.empty:  # KenLM's own C++ probing model (kenlm_benchmark -t 1): the peer to beat
            ax.axhline(float(kp.ns_min.iloc[0]), color=line.get_color(), lw=1.0, ls="--")
    ax.set_xlabel("prefetches in flight (automaton queue size; 0 = sequential path)")
    ax.set_ylabel("ns per query (min over repeats; band: min-max of the repeats)")
    ax.set_title("Mokry 2016 Fig 3.5: LM scoring time vs. prefetches in flight\n"
                 "(dotted: our sequential path; open triangle: sequential, all orders prefetched; dashed: KenLM probing,"
                 " C++ kenlm_benchmark -t 1)", fontsize=8)
    ax.set_xticks(range(0, 17, 2))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return fig


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench mokry_lm` rows. exact: our score checksum per model (the log10 sum in query order as a hex float;
    every sequential/automaton point must agree). ratio: best automaton speed-up over our sequential path,
    and our sequential path against the kenlm module; ours against KenLM's C++ probing model when measured."""
    recs: list[metrics.Record] = []
    ours = rows[rows.backend.isin(["sequential", "automaton"])]
    for model, g in ours.groupby("model"):
        recs.append(("mokry_lm", f"model={model}", "checksum", metrics.distinct(g.checksum), "exact"))
    for r in best_speedups(rows).itertuples():
        pairs = {"speedup": r.speedup, "sequential_vs_kenlm": r.sequential_vs_kenlm}
        for col in ("sequential_vs_kenlm_probing_cpp", "automaton_vs_kenlm_probing_cpp"):
            if hasattr(r, col):
                pairs[col] = getattr(r, col)
        recs += metrics.ratios("mokry_lm", f"model={r.model}", pairs, r)
    return recs


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report mokry_lm`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("mokry_lm",
         help="Mokry Table 3.3 (best automaton speed-up per model size) and Fig 3.5 from LM rows",
         settings=(
             arg("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench mokry_lm`"),
             arg("--table", help="output stem for Table 3.3 (.csv and .md)"),
             arg("--figure", help="output PNG for Fig 3.5"),
             arg("--metrics", help="output CSV of regression metrics "
                                    "(smtbench.report.mokry_lm.regression_metrics)"),
             counts_arg(),
         )),
)


NOTES = ("Ours: probing-hash LM (16-byte entries, 1.5 buckets per n-gram, KenLM's query semantics), one thread, "
         "the test document pre-converted to ids and repeated to >= the sweep's query count; min over repeats; "
         "speed-up = sequential ns / best automaton ns from the same run; every backend's log10 sum is "
         "bit-identical (checked in the run). kenlm_module_ns: the `kenlm` Python module's Model.score per "
         "sentence on the same lines (includes a Python call per sentence and string handling per word); "
         "sequential_vs_kenlm = kenlm_module_ns / sequential_ns. kenlm_probing_cpp / kenlm_trie_cpp: KenLM's own "
         "kenlm_benchmark -q -t 1 on build_binary models of the same ARPA, interleaved with ours in every repeat "
         "(wall time excluding load, with its reader thread feeding ids from the page cache; ours times the C loop "
         "over an in-memory array) - the headline peers. *_line_*: the same LM probed from each n-gram's cache "
         "line; sequential_pf_*: the sequential walk with every order's bucket requested when a query starts "
         "(csrc/lm/lmprobe.c). Rows record process_anon_huge_mib (memory actually on huge pages). "
         "Synthetic models were estimated on text sampled "
         "from a model of the shipped corpus. paper_*: the thesis row of the nearest model size "
         "(Mokry 2016, Table 3.3; KenLM models of 11 MB to 137 GB).")


def main(args: argparse.Namespace) -> int:
    from .common import check_counts, COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows, "mokry_lm")
    check_counts(args.counts)  # a bad --counts stops here, before any output (or folder) is made
    if args.table:
        write_table(with_counts(table3_3(rows), args.counts), args.table,
                    "Mokry 2016 Table 3.3: best automaton-queue speed-up per model size", notes=NOTES + " " + INTERVAL_NOTE
                    + (" " + COUNT_NOTE if args.counts else ""))
    if args.figure:
        save_figure(fig3_5(rows), args.figure)
    if args.metrics:
        metrics.write(regression_metrics(rows), args.metrics)
    return 0
