"""`smtbench report shards`: split-and-merged outputs (sharded decoding, distributed scoring) against one job's."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..report.shards import EXPERIMENTS

    p = groups["report"].add_parser(
        "shards", help="check that split-and-merged outputs equal their one-job runs byte for byte",
        description="Each --pair KEY OUTPUT MERGED SINGLE: the merged output of the split jobs and the same output of "
                    "one job (.gz/.xz compared decompressed). Any difference is a one-line error naming both files; "
                    "otherwise writes the table (TABLE.csv/.md) and the exact metrics (identical_OUTPUT = 1 per KEY).")
    p.add_argument("--experiment", required=True, choices=EXPERIMENTS)
    p.add_argument("--pair", nargs=4, action="append", required=True, metavar=("KEY", "OUTPUT", "MERGED", "SINGLE"))
    p.add_argument("--table", required=True, help="output stem: TABLE.csv and TABLE.md")
    p.add_argument("--metrics", default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import metrics
    from ..report.common import write_table
    from ..report.shards import Pair, compare, metric_records

    table = compare([Pair(*p) for p in args.pair])
    title = {"decode_shards": "Sharded decoding against one unsharded run",
             "mediani_distributed": "Distributed phrase scoring (partition, partial counts, merge) against one job"}
    write_table(table, args.table, title[args.experiment],
                notes="Every merged output is byte-identical to the one-job output (sha256: its first 16 hex digits).")
    if args.metrics:
        metrics.write(metric_records(args.experiment, table), args.metrics)
    return 0
