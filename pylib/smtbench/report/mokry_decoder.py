"""Mokry 2016 Table 3.4 and Fig 3.6: the pipeline-tolerant decoder (`smtbench bench mokry_decoder` rows)."""
from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import pandas as pd

from ..protocol import kept
from .common import Ratio, add_interval, declare, move_last, paper_values, ratio_pairs
from . import metrics
from ..experiments.frame import Verb, arg

# the declarations (report.common.declare): our decoder against itself, one run, clock and thread count
RATIOS = {"speedup_vs_off": Ratio("speedup_vs_off", num="LM queue, best size", den="LM pipeline off"),
          "speedup_vs_lazy": Ratio("speedup_vs_lazy", num="LM queue, best size", den="lazy LM scoring"),
          "exact_speedup_vs_off": Ratio("exact_speedup_vs_off", num="exact LM queue, best size",
                                        den="LM pipeline off")}
declare("mokry_table3_4", *RATIOS.values())


def _pairs(name: str, g: pd.DataFrame, num: pd.Series, den: pd.Series, lm: str) -> list[float]:
    return ratio_pairs(RATIOS[name], g, num, den, value="decode_seconds", where=f"mokry_table3_4 ({lm})") or []


def _pt(g: pd.DataFrame, point: str, q=None) -> pd.Series:
    m = g["point"] == point
    return m & (g["queue_size"] == q) if q is not None else m


def table3_4(rows: pd.DataFrame) -> pd.DataFrame:
    rows = kept(rows)
    out = []
    per: dict[str, list[list[float]]] = {"speedup_vs_off": [], "speedup_vs_lazy": [], "exact_speedup_vs_off": []}
    for lm, g in rows.groupby("lm", sort=True):
        best = g.groupby(["point", "queue_size"], dropna=False)["decode_seconds"].min().reset_index()
        med = g.groupby(["point", "queue_size"], dropna=False)["decode_seconds"].median().reset_index()
        off = float(best[best.point == "off"].decode_seconds.iloc[0])
        lazy = float(best[best.point == "lazy"].decode_seconds.iloc[0])
        q = best[best.point == "queue"].sort_values("decode_seconds").iloc[0]
        qual = g.drop_duplicates("point").set_index("point")
        out.append({"threads": 1, "lm": lm, "lm_mib": round(float(g.lm_bytes.iloc[0]) / 2**20, 1),
                    "sentences": int(g.sentences.iloc[0]), "time_off_s": off, "time_lazy_s": lazy,
                    "time_queue_s": float(q.decode_seconds), "best_queue_size": int(q.queue_size),
                    "speedup_vs_off": off / float(q.decode_seconds), "speedup_vs_lazy": lazy / float(q.decode_seconds),
                    "median_lazy_s": float(med[med.point == "lazy"].decode_seconds.iloc[0]),
                    "bleu_off": float(qual.loc["off", "bleu"]), "bleu_queue": float(qual.loc["queue", "bleu"]),
                    "mean_score_off": float(qual.loc["off", "mean_score"]),
                    "mean_score_queue": float(qual.loc["queue", "mean_score"]), **_exact(best, qual, off)})
        qq = _pt(g, "queue", q.queue_size)
        per["speedup_vs_off"].append(_pairs("speedup_vs_off", g, qq, _pt(g, "off"), lm))
        per["speedup_vs_lazy"].append(_pairs("speedup_vs_lazy", g, qq, _pt(g, "lazy"), lm))
        x = out[-1].get("best_exact_queue_size")
        per["exact_speedup_vs_off"].append(_pairs("exact_speedup_vs_off", g, _pt(g, "queue-exact", x), _pt(g, "off"),
                                                  lm) if x is not None else [])
    df = pd.DataFrame(out)
    for col, r in per.items():
        if col in df.columns:
            df = add_interval(df, col, r)
    df = move_last(df, ["n_repeats"])
    pv = paper_values("mokry2016", "table3_4").set_index("key")
    if "threads=1" in pv.index:
        for col in pv.columns:
            df[col] = pv.loc["threads=1", col]
    return df


def _exact(best: pd.DataFrame, qual: pd.DataFrame, off: float) -> dict:
    """The queue-exact columns (the thesis' future work), when the rows have them."""
    x = best[best.point == "queue-exact"].sort_values("decode_seconds")
    if x.empty:
        return {}
    x = x.iloc[0]
    return {"time_queue_exact_s": float(x.decode_seconds), "best_exact_queue_size": int(x.queue_size),
            "exact_speedup_vs_off": off / float(x.decode_seconds), "bleu_queue_exact": float(qual.loc["queue-exact",
                                                                                                     "bleu"]),
            "mean_score_queue_exact": float(qual.loc["queue-exact", "mean_score"])}


def fig3_6(rows: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(6, 4))
    for lm, g in rows.groupby("lm"):
        best = g.groupby(["point", "queue_size"], dropna=False)["decode_seconds"].min().reset_index()
        q = best[best.point == "queue"].sort_values("queue_size")
        line, = ax.plot(q.queue_size, q.decode_seconds, marker="o", label=f"{lm}: automaton queue")
        x = best[best.point == "queue-exact"].sort_values("queue_size")
        if len(x):
            ax.plot(x.queue_size, x.decode_seconds, marker="^", linestyle="-.", color=line.get_color(),
                    label=f"{lm}: queue-exact")
        for pt, style in (("lazy", "--"), ("off", ":")):
            v = best[best.point == pt].decode_seconds
            if len(v):
                ax.axhline(float(v.iloc[0]), linestyle=style, color=line.get_color(), label=f"{lm}: {pt}")
    ax.set_xlabel("automaton queue size")
    ax.set_ylabel("decoding time (s, best of repeats, 1 thread)")
    ax.set_title("Mokry Fig 3.6 analogue: cube pruning, LM through the automaton queue")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


NOTES = ("Ours: cube pruning (pop limit and -s as in the rows) on the model named at the end, one thread, "
         "decode time excluding loading, best of the interleaved repeats. off = Moses2's scoring (every item scored in"
         ' full when created); lazy = items ordered by every feature but the LM of their first words, the LM added '
         'synchronously when popped; queue = the same pops, their LM through the automaton queue before the next stack'
         " (outputs checked equal to lazy's in the run); queue-exact = the thesis' future work: new items through the "
         "automaton queue before they enter the item queue (exact scores, every item's LM computed as in off; pops in "
         'rounds of the queue size, so the pop order shifts a little). speedup_vs_lazy is what the queue itself earns;'
         ' speedup_vs_off compares with the plain decoder. paper_*: Mokry 2016 Table 3.4, 1 thread (Moses v1, '
         'Romanian-English, KenLM; time in s). ')


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench mokry_decoder` rows. exact: BLEU and the output digest per point (deterministic; every queue size equals
    lazy scoring, checked in the run); ratio: lazy/queue and off/queue time at the best queue size (one run)."""
    out: list[metrics.Record] = []
    for (lm, pt), g in rows.groupby(["lm", "point"]):
        q = g.iloc[0]
        key = f"{lm}-{pt}-p{int(q.pop_limit)}-n{int(q.sentences)}"
        out.append(("mokry_decoder", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
        out.append(("mokry_decoder", key, "output_sha", metrics.distinct(g.output_sha), "exact"))
    for lm, g in rows.groupby("lm"):
        best = g.groupby(["point", "queue_size"], dropna=False)["decode_seconds"].min().reset_index()
        qbest = float(best[best.point == "queue"].decode_seconds.min())
        off = float(best[best.point == "off"].decode_seconds.iloc[0])
        lazy = float(best[best.point == "lazy"].decode_seconds.iloc[0])
        out += metrics.ratios("mokry_decoder", str(lm),
                              {"speedup_vs_lazy": lazy / qbest, "speedup_vs_off": off / qbest})
    return out


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report mokry_decoder`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("mokry_decoder",
         help="Mokry Table 3.4 / Fig 3.6 (pipeline-tolerant decoder)",
         settings=(
             arg("--rows", nargs="+", required=True),
             arg("--table", required=True),
             arg("--figure", required=True),
             arg("--metrics", default=None),
         )),
)


def main(args: argparse.Namespace) -> int:
    from .common import INTERVAL_NOTE, model_note, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "mokry_decoder")
    write_table(table3_4(rows), args.table, "Mokry 2016 Table 3.4: the pipeline-tolerant decoder",
                notes=NOTES + INTERVAL_NOTE + " " + model_note(rows))
    save_figure(fig3_6(rows), args.figure)
    if args.metrics:
        metrics.write(regression_metrics(rows), args.metrics)
    return 0
