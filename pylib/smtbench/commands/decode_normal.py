"""`smtbench decode normal`: Moses' normal stack search (-search-algorithm 0) on a Moses model."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..decode.cli import add_io_args, add_model_args, add_thread_args  # light: argparse only

    p = groups["decode"].add_parser(
        "normal", help="Moses' normal stack search (-search-algorithm 0), as Moses2 implements it",
        description="Stacks by number of covered source words; recombination on (coverage, LM state, last "
                    "source span); counters (hypotheses created, recombined, discarded, pruned; decode time "
                    "excluding model loading) as JSON on stderr.")
    add_model_args(p)
    p.add_argument("-s", "--stack-size", type=int, default=None,
                   help="hypotheses kept per stack (Moses -s; default: the ini's [stack], else 200)")
    p.add_argument("-b", "--beam-threshold", type=float, default=None,
                   help="Moses' beam threshold, a probability ratio (default: the ini's [beam-threshold], else "
                        "1e-5 = ln -11.51; 0 = none)")
    p.add_argument("--distortion-limit", type=int, default=None,
                   help="Moses' distortion limit (default: the ini's [distortion-limit], else 6; negative = none)")
    p.add_argument("--recombine-forward", action="store_true",
                   help="keep hypotheses apart whose previous pair's forward reordering scores differ "
                        "(Moses2 recombines them)")
    add_thread_args(p)
    add_io_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..decode.cli import check_threads, run_decoder, threaded
    from ..decode.normal import NormalDecoder

    check_threads(args)

    def make(model, nbest):
        return threaded(NormalDecoder(model, stack_size=args.stack_size, beam_threshold=args.beam_threshold,
                                      distortion_limit=args.distortion_limit, nbest=nbest,
                                      recombine_forward=args.recombine_forward), args)

    return run_decoder(args, make, {"search": "normal", "stack_size": args.stack_size,
                                    "beam_threshold": args.beam_threshold, "threads": args.threads,
                                    "pool": args.pool})
