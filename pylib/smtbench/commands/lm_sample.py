"""`smtbench lm sample`: seeded synthetic text drawn from an ARPA model (exact back-off sampling, C)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["lm"].add_parser(
        "sample", help="draw a seeded SYNTHETIC text from an ARPA model (writes <out>.json labelling it)")
    p.add_argument("--arpa", required=True, help="source model (plain/.gz/.xz)")
    p.add_argument("--words", type=int, required=True, help="number of words (</s> not counted)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True, help="output text (atomic; .gz compresses)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from ..lm.sample import sample

    stats = sample(args.arpa, args.out, args.words, args.seed, progress=not args.quiet)
    print(json.dumps(asdict(stats)))
    return 0
