"""`smtbench tm binarize`: a Moses text phrase table (+ reordering table) -> the binarized, memory-mapped table."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["tm"].add_parser(
        "binarize", help="binarize a Moses phrase table for on-demand lookup (the Moses2 paper's Probing table)",
        description="Builds once what `decode cube --binary` memory-maps: a probing hash of the source phrases, "
                    "the target side plain or compressed (varint word ids), the reordering scores integrated into "
                    "the targets or in a separate probing table, and the source phrases ranked by training "
                    "count for the static cache (--cache at decoding).")
    p.add_argument("--phrase-table", required=True, help="Moses phrase table (plain/.gz/.xz)")
    p.add_argument("--reordering-table", default=None, help="its lexicalized reordering table (6 scores)")
    p.add_argument("--reordering", choices=["integrated", "separate", "none"], default=None,
                   help="where the reordering scores go (default: integrated if a table is given, else none)")
    p.add_argument("--no-compress", action="store_true", help="store target word ids as plain 32-bit integers")
    p.add_argument("--out", required=True, help="the binarized table (written atomically)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..tm.binarize import build
    mode = args.reordering or ("integrated" if args.reordering_table else "none")
    info = build(args.phrase_table, args.out, args.reordering_table, mode, not args.no_compress)
    print(json.dumps(info))
    return 0
