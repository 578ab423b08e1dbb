"""`smtbench tm fidelity`: our (filtered) phrase and reordering tables against Moses' own, pair by pair."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["tm"].add_parser(
        "fidelity", help="compare our tables with Moses' (same pairs; same values to printed precision)")
    p.add_argument("--phrase-table", nargs=2, metavar=("OURS", "MOSES"), required=True)
    p.add_argument("--reordering-table", nargs=2, metavar=("OURS", "MOSES"), default=None)
    p.add_argument("--out", default=None, help="write the JSON report here too")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..ioutil import atomic_open
    from ..tm.model import compare_tables
    rep = {"phrase_table": compare_tables(*args.phrase_table, columns=4)}
    if args.reordering_table:
        rep["reordering_table"] = compare_tables(*args.reordering_table, columns=6)
    text = json.dumps(rep)
    print(text)
    if args.out:
        with atomic_open(args.out) as fh:
            fh.write(text + "\n")
    ok = all(r["only_ours"] == 0 and r["only_theirs"] == 0 and r["value_mismatches"] == 0
             and r["alignment_mismatches"] == 0 and r["count_mismatches"] == 0 for r in rep.values())
    return 0 if ok else 1
