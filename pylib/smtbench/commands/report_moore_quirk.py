"""`smtbench report moore_quirk`: Moore & Quirk (2007) Figs 2-3 and the ratio table from `bench moore_quirk` rows."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "moore_quirk", [],
                 help="Moore & Quirk 2007: Fig 2 (BLEU vs ms/word), Fig 3 (BLEU vs "
                      "hypotheses/word), ratios on the upper hulls at equal BLEU")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--ratios", required=True, help="stem of the ratio table (.csv and .md)")
    p.add_argument("--score-ratios", default=None,
                   help="stem of the same table at equal mean model score (search quality, no BLEU noise)")
    p.add_argument("--same-settings", required=True, help="stem of the same-settings table (.csv and .md)")
    p.add_argument("--points", required=True, help="stem of the table of every point (.csv and .md)")
    p.add_argument("--fig2", required=True, help="Fig 2 (.png)")
    p.add_argument("--fig3", required=True, help="Fig 3 (.png)")
    p.add_argument("--moses-rows", nargs="*", default=[], help="the second configuration's rows (Moses mode)")
    p.add_argument("--moses-table", default=None, help="stem of the second configuration's table")
    p.add_argument("--moses-figure", default=None, help="the second configuration's figure (.png)")
    p.add_argument("--oracle", default=None, help="the Moses oracle folder (runs-quiet.tsv, runs.tsv, 1-bests)")
    p.add_argument("--score-figure", default=None, help="Fig 2 with the mean model score instead of BLEU (.png)")
    p.add_argument("--tuning", default=None, help="the tuning run's summary (`smtbench tune --summary`) when the rows "
                                                  "decoded tuned weights: the notes say so")
    p.add_argument("--metrics", default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import moore_quirk as mq
    from ..report.common import INTERVAL_NOTE, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moore_quirk")
    write_table(mq.ratio_table(rows), args.ratios,
                "Moore & Quirk 2007: ms/word and hypotheses/word at equal BLEU (upper hulls), ratios to DE+EP",
                notes=mq.notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    if args.score_ratios:
        write_table(mq.ratio_table(rows, "mean_score"), args.score_ratios,
                    "Moore & Quirk 2007 (ours): ms/word and hypotheses/word at equal mean model score (upper hulls)",
                    notes=mq.notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    write_table(mq.same_settings(rows), args.same_settings,
                "Moore & Quirk 2007: the variants compared at the same pruning settings", notes=mq.notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    write_table(mq.points(rows), args.points, "Moore & Quirk 2007: every setting decoded (Figs 2-3 points)",
                notes=mq.notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    save_figure(mq.fig2(rows), args.fig2)
    save_figure(mq.fig3(rows), args.fig3)
    if args.score_figure:
        save_figure(mq.fig_score(rows), args.score_figure)
    recs = []
    if args.metrics:
        from ..report import metrics
        recs = metrics.moore_quirk(rows)
    if args.moses_rows:
        mrows = read_rows(args.moses_rows, "moore_quirk")
        if args.moses_table:
            write_table(mq.moses_table(mrows, args.oracle), args.moses_table,
                        "Moore & Quirk DE+EP on the oracle's Moses model vs our and Moses' other searches, at equal "
                        "BLEU", notes=mq.MOSES_NOTES + " " + INTERVAL_NOTE)
        if args.moses_figure:
            save_figure(mq.moses_figure(mrows, args.oracle), args.moses_figure)
        if args.metrics:
            recs += metrics.moore_quirk(mrows, peers=True)
    if args.metrics:
        metrics.write(recs, args.metrics)
    return 0
