"""`smtbench data prepare`: split, tokenize and lowercase the shipped parallel corpus."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    d = groups["top"].add_parser("data", help="corpus preparation")
    sub = d.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")
    p = sub.add_parser("prepare", help="whole-book train/dev/test split, sacremoses tokenization (escape=False), "
                                       "lowercasing, raw dev/test references")
    p.add_argument("--tsv", default="resources/bible-es-en/es-en.tsv.xz", help="ref<TAB>es<TAB>en (.xz/.gz ok)")
    p.add_argument("--outdir", default="work/data")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import prepare
    counts = prepare(args.tsv, args.outdir, progress=args.progress)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0
