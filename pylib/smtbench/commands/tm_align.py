"""`smtbench tm align`: eflomal both directions + grow-diag-final-and (ours)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["tm"].add_parser("align", help="word alignment: eflomal (both directions) + grow-diag-final-and")
    p.add_argument("--src", required=True, help="tokenized source (F, es), one sentence per line")
    p.add_argument("--tgt", required=True, help="tokenized target (E, en)")
    p.add_argument("--out", required=True, help="symmetrized alignment (Pharaoh i-j, i = F position)")
    p.add_argument("--fwd", help="keep eflomal's forward links here (default: OUT.fwd)")
    p.add_argument("--rev", help="keep eflomal's reverse links here (default: OUT.rev)")
    p.add_argument("--skip-eflomal", action="store_true", help="only symmetrize existing --fwd/--rev files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tm.align import run_eflomal, symmetrize_files
    fwd = args.fwd or f"{args.out}.fwd"
    rev = args.rev or f"{args.out}.rev"
    if not args.skip_eflomal:
        run_eflomal(args.src, args.tgt, fwd, rev)
    n = symmetrize_files(args.src, args.tgt, fwd, rev, args.out)
    print(f"aligned {n} sentence pairs -> {args.out}")
    return 0
