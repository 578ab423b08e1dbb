"""`smtbench report mokry_decoder`: Mokry Table 3.4 and Fig 3.6 from `bench mokry_decoder` rows."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "mokry_decoder", [],
                 help="Mokry Table 3.4 / Fig 3.6 (pipeline-tolerant decoder)")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--figure", required=True)
    p.add_argument("--metrics", default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import mokry_decoder as md
    from ..report.common import INTERVAL_NOTE, model_note, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "mokry_decoder")
    write_table(md.table3_4(rows), args.table, "Mokry 2016 Table 3.4: the pipeline-tolerant decoder",
                notes=md.NOTES + INTERVAL_NOTE + " " + model_note(rows))
    save_figure(md.fig3_6(rows), args.figure)
    if args.metrics:
        from ..report import metrics
        metrics.write(metrics.mokry_decoder(rows), args.metrics)
    return 0
