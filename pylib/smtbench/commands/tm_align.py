"""`smtbench tm align`: eflomal both directions + grow-diag-final-and (ours)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..tm.align import EFLOMAL_DEFAULTS, HEURISTICS
    p = groups["tm"].add_parser("align", help="word alignment: eflomal (both directions) + symmetrization "
                                              "(grow-diag-final-and by default)")
    p.add_argument("--src", required=True, help="tokenized source side (F), one sentence per line")
    p.add_argument("--tgt", required=True, help="tokenized target side (E), line-parallel to --src")
    p.add_argument("--out", required=True, help="symmetrized alignment (Pharaoh i-j, i = F position)")
    p.add_argument("--alignment", choices=HEURISTICS, default="grow-diag-final-and",
                   help="symmetrization heuristic (train-model.perl --alignment)")
    p.add_argument("--eflomal-model", type=int, choices=(1, 2, 3), default=EFLOMAL_DEFAULTS["model"],
                   help="1 = IBM1, 2 = +HMM, 3 = +fertility")
    p.add_argument("--eflomal-iterations", type=int, default=None,
                   help="sampling iterations per model (default: eflomal's own choice from the corpus size)")
    p.add_argument("--eflomal-samplers", type=int, default=EFLOMAL_DEFAULTS["n_samplers"])
    p.add_argument("--eflomal-null-prior", type=float, default=EFLOMAL_DEFAULTS["null_prior"])
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--fwd", help="keep eflomal's forward links here (default: OUT.fwd)")
    p.add_argument("--rev", help="keep eflomal's reverse links here (default: OUT.rev)")
    p.add_argument("--skip-eflomal", action="store_true", help="only symmetrize existing --fwd/--rev files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tm.align import run_eflomal, symmetrize_files
    fwd = args.fwd or f"{args.out}.fwd"
    rev = args.rev or f"{args.out}.rev"
    if not args.skip_eflomal:
        run_eflomal(args.src, args.tgt, fwd, rev, progress=not args.quiet, model=args.eflomal_model,
                    n_iterations=args.eflomal_iterations, n_samplers=args.eflomal_samplers,
                    null_prior=args.eflomal_null_prior)
    n = symmetrize_files(args.src, args.tgt, fwd, rev, args.out, args.alignment, progress=not args.quiet)
    print(f"aligned {n} sentence pairs -> {args.out}")
    return 0
