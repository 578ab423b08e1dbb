"""`smtbench report moses2_scaling`: the Moses2 paper's Tables 3, 6, 7 and Figs 3, 8, 9/11 from `bench moses2_scaling`
rows, with the acceptance figures against Moses2 (the oracle's runs-quiet.tsv, read live, for the oracle's model)."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "moses2_scaling", [],
                 help="the Moses2 paper's scalability tables and figures")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--oracle", default=None,
                   help="the Moses oracle folder (runs-quiet.tsv): Moses2's figures, for rows of the oracle's model "
                        "(without it: ours only, and the notes say why)")
    p.add_argument("--tables", required=True, help="folder for moses2_table{3,6,7}, moses2_fig{3,8,9}, "
                                                   "moses2_scaling_acceptance (.csv and .md)")
    p.add_argument("--figures", required=True, help="folder for moses2_fig{3,8,9}.png")
    p.add_argument("--metrics", default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..report import moses2_scaling as ms
    from ..report.common import INTERVAL_NOTE, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moses2_scaling")
    t, f = Path(args.tables), Path(args.figures)
    ms_notes = ms.NOTES + " " + ms.model_note(rows, args.oracle)
    write_table(ms.table3(rows), t / "moses2_table3", "Moses2 paper Table 3: % of decoding time per component",
                notes=ms_notes + " Profile: each worker's component sampled by a thread (no hardware counters).")
    write_table(ms.table6(rows), t / "moses2_table6", "Moses2 paper Table 6: static cache sizes", notes=ms_notes + " " + INTERVAL_NOTE)
    write_table(ms.table7(rows), t / "moses2_table7", "Moses2 paper Table 7: compressed or plain target side",
                notes=ms_notes + " " + INTERVAL_NOTE)
    write_table(ms.fig8_table(rows), t / "moses2_fig8", "Moses2 paper Fig 8: reordering separate or integrated",
                notes=ms_notes + " " + INTERVAL_NOTE)
    write_table(ms.scaling_table(rows), t / "moses2_fig9", "Moses2 paper Figs 9/11: words per second against "
                "threads", notes=ms_notes + " " + INTERVAL_NOTE)
    write_table(ms.fig3_table(rows, args.oracle), t / "moses2_fig3", "Moses2 paper Fig 3: ours beside Moses2's "
                "recorded figures", notes=ms_notes + " Moses2's rows are the oracle's recorded quiet re-timing "
                "(`recorded`: another run on another machine), shown with no ratio beside them (issue 40): a ratio "
                "to Moses2 needs Moses2 timed live in the same run.")
    write_table(ms.acceptance(rows, args.oracle), t / "moses2_scaling_acceptance",
                "Moses2 scaling: acceptance figures against Moses2", notes=ms_notes + " " + INTERVAL_NOTE)
    save_figure(ms.fig3(rows, args.oracle), f / "moses2_fig3.png")
    save_figure(ms.fig8(rows), f / "moses2_fig8.png")
    save_figure(ms.fig9(rows), f / "moses2_fig9.png")
    if args.metrics:
        from ..report import metrics
        metrics.write(metrics.moses2_scaling(rows), args.metrics)
    return 0
