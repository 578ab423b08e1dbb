"""`smtbench decode beam`: Pharaoh's beam search and Moore & Quirk's (2007) DE and DE+EP variants."""
from __future__ import annotations

import argparse

_UNITS = ("Thresholds are differences of weighted natural-log model scores (NOT Moses' -b probability ratio), "
          "with the weights normalised so that the sum of their absolute values, UnknownWordPenalty's excepted, is 1 "
          "(--weight-normalization sum-abs, the default; the scores printed stay the model's own: a threshold T "
          "is applied as T x that sum, reported as weight_norm). 'inf' = no pruning by that threshold.")


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..decode.cli import add_io_args, add_model_args, add_thread_args  # light: argparse only

    p = groups["decode"].add_parser(
        "beam", help="Pharaoh's beam search, + distortion-penalty estimation (de), + early pruning (de+ep) "
                     "(Moore & Quirk 2007)",
        description="Stacks by number of covered source words, pruned by --beam-threshold and --beam-limit; "
                    "translations per source span pruned by --ttable-threshold and --ttable-limit; recombination "
                    "on (coverage, LM state, end of the last source phrase). " + _UNITS + " Counters (hypotheses "
                    "evaluated = LM scored, the paper's search-space measure; early-pruning stops; decode time "
                    "excluding model loading) as JSON on stderr.")
    add_model_args(p)
    p.add_argument("--variant", choices=["pharaoh", "de", "de+ep"], required=True,
                   help="pharaoh (section 3), de = + distortion-penalty estimation (section 4), "
                        "de+ep = + early pruning (section 5)")
    p.add_argument("--mode", choices=["paper", "moses"], default="paper",
                   help="paper: the paper's distortion limit (one more word backward; the jump back to the leftmost "
                        "gap must stay allowed) and the final jump to the sentence end charged; moses: Moses' limit, "
                        "no final jump (de = Moses v1's -early-distortion-cost). Default paper")
    p.add_argument("--beam-threshold", type=float, default=None,
                   help="keep the hypotheses of a stack within this of its best (normalised score units; default: "
                        "Moses' -b 1e-5, i.e. ln 1e5 = 11.51 in the model's own score units, divided by the weight "
                        "norm)")
    p.add_argument("--beam-limit", type=int, default=200,
                   help="keep at most this many hypotheses per stack (Moses' -s)")
    p.add_argument("--ttable-threshold", type=float, default=float("inf"),
                   help="keep the translations of a source span within this of its best estimate (normalised "
                        "score units; inf = none, as Moses' -translation-option-threshold 0)")
    p.add_argument("--ttable-limit", type=int, default=None,
                   help="keep at most this many translations per source span (default: the ini's table-limit, "
                        "Moses' 20; it may not exceed it)")
    p.add_argument("--ep-threshold", type=float, default=None,
                   help="early-pruning threshold (de+ep only; default: the --ttable-threshold, as in the paper)")
    p.add_argument("--distortion-limit", type=int, default=None,
                   help="distortion limit (default: the ini's [distortion-limit], else 6; negative = none)")
    p.add_argument("--weight-normalization", choices=["sum-abs", "none"], default="sum-abs",
                   help="how thresholds relate to the model's weights (see above); default sum-abs")
    add_thread_args(p)
    add_io_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..decode.beam import BeamDecoder
    from ..decode.cli import check_threads, run_decoder, threaded

    check_threads(args)
    extra: dict = {"search": "beam", "threads": args.threads, "pool": args.pool}

    def make(model, nbest):
        import math

        from ..decode.beam import weight_norm
        bt = args.beam_threshold
        if bt is None:   # Moses' -b 1e-5 on the model's own scores
            bt = math.log(1e5) / weight_norm(model, args.weight_normalization)
        tl = args.ttable_limit
        if tl is None:
            tl = model.config.feature("PhraseDictionaryMemory").table_limit or 1_000_000
        dec = BeamDecoder(model, variant=args.variant, mode=args.mode, beam_threshold=bt,
                          beam_limit=args.beam_limit, ttable_threshold=args.ttable_threshold,
                          ttable_limit=tl, ep_threshold=args.ep_threshold,
                          distortion_limit=args.distortion_limit, nbest=nbest,
                          normalization=args.weight_normalization)
        extra.update(dec.settings)
        return threaded(dec, args)

    return run_decoder(args, make, extra)
