"""`smtbench report moses-decode`: our normal stack search beside Moses2 / Moses v1 (the oracle)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["report"].add_parser("moses-decode", help="normal search vs Moses2/Moses v1 table from `bench decode` rows")
    p.add_argument("--rows", nargs="+", required=True, help="rows of `bench decode --search normal`")
    p.add_argument("--table", required=True, help="output stem (.csv and .md)")
    p.add_argument("--cube-rows", nargs="+", default=None, help="rows of `bench decode --search cube`")
    p.add_argument("--cube-table", default=None, help="output stem for the cube-pruning table")
    p.add_argument("--metrics", help="regression metrics CSV")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..report import moses_decode as md
    from ..report.common import read_rows, write_table

    rows = read_rows(args.rows)
    write_table(md.with_interval(md.normal_table(rows), rows), args.table,
                "Reference normal stack search vs Moses2 and Moses v1 (oracle model, dev books)", notes=md.NOTES)
    if args.cube_rows and args.cube_table:
        cube = read_rows(args.cube_rows)
        write_table(md.with_interval(md.cube_table(cube), cube), args.cube_table,
                    "Cube pruning vs Moses2 (oracle model, dev books)", notes=md.NOTES)
    if args.metrics:
        from ..report import metrics
        all_rows = rows if not args.cube_rows else pd.concat([rows, read_rows(args.cube_rows)], ignore_index=True)
        metrics.write(metrics.moses_decode(all_rows), args.metrics)
    return 0
