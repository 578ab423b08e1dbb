"""`smtbench decode cube`: Moses2's cube pruning (-search-algorithm 1) on a Moses model."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..decode.cli import add_io_args, add_model_args, add_thread_args

    p = groups["decode"].add_parser(
        "cube", help="Moses2's cube pruning (-search-algorithm 1): ministacks by (coverage, last end)",
        description="Stacks by number of covered words, each made of ministacks keyed by (coverage, end of the last "
                    "source phrase); one queue of items per stack over cube edges (ministack x span x sorted "
                    "options); items scored in full when created; pop limit per stack; -s per ministack.")
    add_model_args(p)
    p.add_argument("--pop-limit", type=int, default=None,
                   help="Moses -cube-pruning-pop-limit (default: the ini's [cube-pruning-pop-limit], else 1000)")
    p.add_argument("-s", "--stack-size", type=int, default=None,
                   help="hypotheses kept per ministack (Moses -s; default: the ini's [stack], else 200)")
    p.add_argument("-b", "--beam-threshold", type=float, default=None,
                   help="Moses' beam threshold, a probability ratio (default: the ini's [beam-threshold], else "
                        "1e-5; 0 = none)")
    p.add_argument("--distortion-limit", type=int, default=None,
                   help="Moses' distortion limit (default: the ini's, else 6; negative = none)")
    p.add_argument("--recombine-forward", action="store_true",
                   help="keep apart hypotheses whose previous pair's forward reordering scores differ")
    p.add_argument("--stacks", choices=["coverage-end", "coverage", "cardinality"], default="coverage-end",
                   help="how hypotheses are grouped, as the unit -s prunes and as the hypothesis side of a cube "
                        "edge (the Moses2 paper, Figs 4-5): coverage-end (Moses2's ministacks), coverage, or "
                        "cardinality (one stack per number of covered words, distortion checked per hypothesis)")
    p.add_argument("--queues", choices=["cardinality", "coverage", "coverage-end"], default="cardinality",
                   help="item queues: one per stack (Moses2), or one per destination coverage (and end), each "
                        "popped up to the pop limit (the Moses2 paper's Table 5)")
    p.add_argument("--lm-pipeline", choices=["off", "lazy", "queue", "queue-exact"], default="off",
                   help="off: Moses2 (items scored in full when created); lazy: items ordered by every feature but "
                        "the LM of their first words, LM added when popped; queue: Mokry's pipeline-tolerant "
                        "decoder, the popped hypotheses' LM through the automaton queue before the next stack; "
                        "queue-exact: new items through the automaton queue before they enter the item queue "
                        "(exact scores; pops in rounds of --queue-size)")
    p.add_argument("--queue-size", type=int, default=8,
                   help="automaton queue size for --lm-pipeline queue / queue-exact (1-16)")
    add_thread_args(p)
    p.add_argument("--binary", default=None, metavar="TABLE",
                   help="a table from `smtbench tm binarize` instead of the ini's text tables")
    p.add_argument("--cache", type=int, default=0,
                   help="with --binary: source phrases decoded into the static cache at load (most frequent first)")
    add_io_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..decode.cli import check_threads, run_decoder, threaded
    from ..decode.cube import CubeDecoder

    check_threads(args)
    if args.cache and not args.binary:
        raise ValueError("--cache needs --binary")

    def make(model, nbest):
        cube = CubeDecoder(model, pop_limit=args.pop_limit, stack_size=args.stack_size,
                           beam_threshold=args.beam_threshold, distortion_limit=args.distortion_limit, nbest=nbest,
                           recombine_forward=args.recombine_forward, lm_pipeline=args.lm_pipeline,
                           queue_size=args.queue_size, stacks=args.stacks, queues=args.queues)
        return threaded(cube, args)

    return run_decoder(args, make, {"search": "cube", "pop_limit": args.pop_limit, "stack_size": args.stack_size,
                                    "lm_pipeline": args.lm_pipeline, "queue_size": args.queue_size,
                                    "stacks": args.stacks, "queues": args.queues, "threads": args.threads,
                                    "pool": args.pool, "binary": args.binary, "cache": args.cache})
