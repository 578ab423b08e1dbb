"""`smtbench machine`: print this machine's facts as JSON."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser("machine", help="print machine facts (CPU, caches, load, compiler, git, GPU) as JSON")
    p.add_argument("--out", help="also write the JSON to this file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..ioutil import atomic_write_text
    from ..machine import main_json

    text = main_json()
    print(text)
    if args.out:
        atomic_write_text(args.out, text + "\n")
    return 0
