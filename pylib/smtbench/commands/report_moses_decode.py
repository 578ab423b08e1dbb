"""`smtbench report moses-decode`: our normal stack search beside Moses2 / Moses v1 (the oracle)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["report"].add_parser("moses-decode", help="normal search vs Moses2/Moses v1 table from `bench decode` rows")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--table", required=True, help="output stem (.csv and .md)")
    p.add_argument("--metrics", help="regression metrics CSV")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import moses_decode as md
    from ..report.common import read_rows, write_table

    rows = read_rows(args.rows)
    write_table(md.normal_table(rows), args.table,
                "Reference normal stack search vs Moses2 and Moses v1 (oracle model, dev books)", notes=md.NOTES)
    if args.metrics:
        from ..report import metrics
        metrics.write(metrics.moses_decode(rows), args.metrics)
    return 0
