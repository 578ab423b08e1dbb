"""The Moses2 paper's search experiments (`smtbench bench moses2_search` rows): Table 4 and Fig 6 (stack
configurations against the pop limit), Table 5 (queue configurations), each with search errors on short verses."""
from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import pandas as pd

from ..protocol import kept
from .common import Ratio, add_interval, declare, paper_values, ratio_pairs
from . import metrics
from ..experiments.frame import Verb, arg

# the declarations (report.common.declare): our cube pruning against itself, one run, clock and thread count; the
# score columns are differences of mean model scores (no timing: nothing to share)
TIME_VS_CARD = Ratio("time_vs_cardinality", num="the row's queue configuration", den="the cardinality queues")
SCORE_VS_CARD = Ratio("score_vs_cardinality", num="the row's mean model score", den="the cardinality queues'",
                      same=())
declare("moses2_table4", SCORE_VS_CARD)
declare("moses2_table5", TIME_VS_CARD, SCORE_VS_CARD)

STACKS = ["cardinality", "coverage", "coverage-end"]


def _summary(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    g = rows.groupby(keys, sort=False)
    t = g["decode_seconds"].agg(time_min_s="min", time_median_s="median").reset_index()
    first = g.first().reset_index()
    cols = ["sentences", "source_words", "mean_score", "bleu", "created_per_word", "search_errors",
            "beat_reference", "short_sentences", "references_confirmed", "references_exact"]
    return t.merge(first[keys + [c for c in cols if c in first.columns]], on=keys)


def table4(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per pop limit and stack configuration, ours beside the paper's."""
    df = _summary(rows[rows.table == "stacks"], ["pop_limit", "stacks"]).sort_values(
        ["pop_limit", "stacks"], key=lambda s: s.map(STACKS.index) if s.name == "stacks" else s)
    df["words_per_second"] = df.source_words / df.time_min_s
    card = df[df.stacks == "cardinality"].set_index("pop_limit").mean_score
    df["score_vs_cardinality"] = df.mean_score - df.pop_limit.map(card)  # the Table 4 trend, at full precision
    pv = paper_values("fast_scalable", "table4")
    pv["pop_limit"] = pv.key.str.extract(r"pop=(\d+)")[0].astype(int)
    pv["stacks"] = pv.key.str.extract(r"stacks=(\S+)")[0]
    out = df.merge(pv.drop(columns="key"), on=["pop_limit", "stacks"], how="left")
    pcard = pv[pv.stacks == "cardinality"].set_index("pop_limit").paper_mean_score
    out["paper_score_vs_cardinality"] = out.paper_mean_score - out.pop_limit.map(pcard)
    return out


def table5(rows: pd.DataFrame) -> pd.DataFrame:
    q = kept(rows[rows.table == "queues"])
    df = _summary(q, ["pop_limit", "queues"])
    df["words_per_second"] = df.source_words / df.time_min_s
    df["time_vs_cardinality"] = df.time_min_s / float(df[df.queues == "cardinality"].time_min_s.iloc[0])
    df = add_interval(df, "time_vs_cardinality", [ratio_pairs(TIME_VS_CARD, q, q.queues == "cardinality", q.queues == x,
                                                              value="decode_seconds", where=f"moses2_table5, {x}")
                                                  or [] for x in df.queues])
    df["score_vs_cardinality"] = df.mean_score - float(df[df.queues == "cardinality"].mean_score.iloc[0])
    pv = paper_values("fast_scalable", "table5")
    pv["queues"] = pv.key.str.replace("queues=", "", regex=False)
    out = df.merge(pv.drop(columns="key"), on="queues", how="left")
    pc = out[out.queues == "cardinality"]
    out["paper_time_vs_cardinality"] = out.paper_time_s / float(pc.paper_time_s.iloc[0])
    out["paper_score_vs_cardinality"] = out.paper_mean_score - float(pc.paper_mean_score.iloc[0])
    return out


def fig6(rows: pd.DataFrame):
    """Time against mean model score, one line per stack configuration (points labelled by pop limit); the
    paper's panel beside ours (its scores are on another model, so the axes are separate)."""
    t4 = table4(rows)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    for st in STACKS:
        g = t4[t4.stacks == st].sort_values("pop_limit")
        if g.empty:
            continue
        ax.plot(g.time_min_s, g.mean_score, marker="o", label=st)
        for _, r in g.iterrows():
            ax.annotate(str(int(r.pop_limit)), (r.time_min_s, r.mean_score), fontsize=6)
        pv = paper_values("fast_scalable", "table4")
        pv = pv[pv.key.str.endswith(f"stacks={st}")].copy()
        pv["pop"] = pv.key.str.extract(r"pop=(\d+)")[0].astype(int)
        pv = pv.sort_values("pop")
        bx.plot(pv.paper_time_s, pv.paper_mean_score, marker="s", label=st)
    ax.set_xscale("log")
    ax.set_xlabel("decoding time (s, best of repeats, 1 thread)")
    ax.set_ylabel("mean model score per sentence")
    models = sorted({str(m) for m in rows["model"].dropna()}) if "model" in rows else []
    trained = bool(models) and all("work/tm/" in m for m in models)
    ax.set_title(f"ours ({'the trained model, test verses' if trained else 'oracle Moses model, dev verses'})")
    ax.legend(fontsize=7)
    bx.set_xscale("log")
    bx.set_xlabel("decoding time (s, 32 threads)")
    bx.set_ylabel("average model score")
    bx.set_title("the paper's Table 4")
    bx.legend(fontsize=7)
    fig.suptitle("Moses2 paper Fig 6 analogue: time vs model score per stack configuration")
    fig.tight_layout()
    return fig


NOTES = ("Ours: cube pruning on the model named below (the first `sentences` of its verses), one thread, -s = the "
         "pop limit, decode time excluding loading (min and median of the interleaved repeats); mean_score = mean "
         "model score per sentence (the paper's 'average model score' is on its own model and scale: compare the "
         "trends, not the values). Stack configurations (the paper's Figs 4-5): coverage-end = Moses2's "
         "ministacks, an edge per ministack x span; coverage / cardinality = an edge per pruning unit x span, "
         "the unit's hypotheses that may take the span checked one by one. Queue configurations (Fig 7, Table 5): "
         "one item queue per stack (Moses2) or per destination coverage (and end), each popped up to the pop "
         "limit. search_errors: verses of at most 12 source words (all of the input, not only the timed subset) "
         "whose output scores below a near-exact reference (normal search, no beam, exact recombination, the two "
         "stack sizes in reference_widths; references_confirmed = both agree; references_exact = the widest pruned "
         "nothing, so proven optimal; beat_reference > 0 would expose a reference that is not exact; rows before "
         "references_exact used Moses' lossy recombination). paper_*: the Moses2 paper, Tables 4-5 (32 threads).")


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench moses2_search` rows. exact per point: BLEU, output digest, search errors (deterministic); ratio: each
    queue configuration's time over the cardinality queue's, and coverage-end stacks' over cardinality's at the
    largest pop limit (one run)."""
    out: list[metrics.Record] = []
    for (table, st, qu, pop), g in rows.groupby(["table", "stacks", "queues", "pop_limit"]):
        q = g.iloc[0]
        key = f"{table}-{st}-{qu}-p{int(pop)}-n{int(q.sentences)}"
        out.append(("moses2_search", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
        out.append(("moses2_search", key, "output_sha", metrics.distinct(g.output_sha), "exact"))
        if "search_errors" in q and pd.notna(q.search_errors):
            out.append(("moses2_search", key, "search_errors", str(int(q.search_errors)), "exact"))
    qs = rows[rows.table == "queues"].groupby("queues")["decode_seconds"].min()
    if "cardinality" in qs:
        out += metrics.ratios("moses2_search", "queues", {f"time_{k}_vs_cardinality": v / qs["cardinality"]
                                                          for k, v in qs.items() if k != "cardinality"})
    st = rows[rows.table == "stacks"]
    if len(st):
        top = st[st.pop_limit == st.pop_limit.max()].groupby("stacks")["decode_seconds"].min()
        if "cardinality" in top and "coverage-end" in top:
            out += metrics.ratios("moses2_search", f"stacks-p{int(st.pop_limit.max())}",
                                  {"time_coverage-end_vs_cardinality": top["coverage-end"] / top["cardinality"]})
    return out


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report moses2_search`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("moses2_search",
         help="the Moses2 paper's Tables 4-5 / Fig 6 (stack and queue "
                      "configurations, search errors)",
         settings=(
             arg("--rows", nargs="+", required=True),
             arg("--table4", required=True, help="stem of Table 4 (.csv and .md)"),
             arg("--table5", required=True, help="stem of Table 5 (.csv and .md)"),
             arg("--figure", required=True, help="Fig 6 (.png)"),
             arg("--metrics", default=None),
         )),
)


def main(args: argparse.Namespace) -> int:
    from .common import INTERVAL_NOTE, model_note, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moses2_search")
    notes = NOTES + " " + model_note(rows)
    write_table(table4(rows), args.table4, "Moses2 paper Table 4: stack configurations x pop limits",
                notes=notes)
    write_table(table5(rows), args.table5, "Moses2 paper Table 5: queue configurations",
                notes=notes + " " + INTERVAL_NOTE)
    save_figure(fig6(rows), args.figure)
    if args.metrics:
        metrics.write(regression_metrics(rows), args.metrics)
    return 0
