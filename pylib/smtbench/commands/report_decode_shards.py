"""`smtbench report decode_shards`: sharded decoding's split-and-merged outputs against one unsharded job's; the same
check as `smtbench report mediani_distributed` for Mediani's distributed scoring (partition, partial counts, merge)."""
from __future__ import annotations

import argparse

#: verb (= the experiment of its table and metrics) -> the table's title
TITLES = {"decode_shards": "Sharded decoding against one unsharded run",
          "mediani_distributed": "Distributed phrase scoring (partition, partial counts, merge) against one job"}


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..experiments import add_verb

    for name, title in TITLES.items():
        p = add_verb(groups["report"], name, [], help=f"{title}: byte for byte",
                     description="Each --pair KEY OUTPUT MERGED SINGLE: the merged output of the split jobs and the same "
                                 "output of one job (.gz/.xz compared decompressed). Any difference is a one-line "
                                 "error naming both files; otherwise writes the table (TABLE.csv/.md) and the exact "
                                 f"metrics (experiment {name}, identical_OUTPUT = 1 per KEY).")
        p.add_argument("--pair", nargs=4, action="append", required=True, metavar=("KEY", "OUTPUT", "MERGED", "SINGLE"))
        p.add_argument("--table", required=True, help="output stem: TABLE.csv and TABLE.md")
        p.add_argument("--metrics", default=None)
        p.set_defaults(func=run, experiment=name)


def run(args: argparse.Namespace) -> int:
    from ..report import metrics
    from ..report.common import write_table
    from ..report.decode_shards import Pair, compare, metric_records

    table = compare([Pair(*p) for p in args.pair])
    write_table(table, args.table, TITLES[args.experiment],
                notes="Every merged output is byte-identical to the one-job output (sha256: its first 16 hex digits).")
    if args.metrics:
        metrics.write(metric_records(args.experiment, table), args.metrics)
    return 0
