"""`smtbench report moses2_search`: the Moses2 paper's Tables 4-5 and Fig 6 from `bench moses2_search` rows."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "moses2_search", [],
                 help="the Moses2 paper's Tables 4-5 / Fig 6 (stack and queue "
                      "configurations, search errors)")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--table4", required=True, help="stem of Table 4 (.csv and .md)")
    p.add_argument("--table5", required=True, help="stem of Table 5 (.csv and .md)")
    p.add_argument("--figure", required=True, help="Fig 6 (.png)")
    p.add_argument("--metrics", default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import moses2_search as ms
    from ..report.common import INTERVAL_NOTE, model_note, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moses2_search")
    notes = ms.NOTES + " " + model_note(rows)
    write_table(ms.table4(rows), args.table4, "Moses2 paper Table 4: stack configurations x pop limits",
                notes=notes)
    write_table(ms.table5(rows), args.table5, "Moses2 paper Table 5: queue configurations",
                notes=notes + " " + INTERVAL_NOTE)
    save_figure(ms.fig6(rows), args.figure)
    if args.metrics:
        from ..report import metrics
        metrics.write(metrics.moses2_search(rows), args.metrics)
    return 0
