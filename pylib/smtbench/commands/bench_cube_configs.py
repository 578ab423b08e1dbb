"""`smtbench bench cube-configs`: the Moses2 paper's Table 4 / Fig 6 (stack configurations x pop limits) and
Table 5 (queue configurations), with the search errors of every point on the short sentences."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["bench"].add_parser(
        "cube-configs", help="cube pruning stack/queue configurations x pop limits, search errors "
                             "(the Moses2 paper's Tables 4-5, Fig 6)",
        description="Decodes the first --sentences lines at every point, --repeats interleaved timed passes "
                    "(model loading excluded), and counts search errors on every line of at most --short-words "
                    "source words against a near-exact reference (normal search, no beam, stack sizes "
                    "--reference-widths; confirmed when the two widest agree).")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True, help="reference translations (BLEU)")
    p.add_argument("--pop-limits", default="100,500,1000,5000", help="Table 4's pop limits")
    p.add_argument("--stacks", default="cardinality,coverage,coverage-end")
    p.add_argument("--queues", default="cardinality,coverage,coverage-end")
    p.add_argument("--queue-pop-limit", type=int, default=400, help="Table 5's pop limit")
    p.add_argument("-s", "--stack-size", type=int, default=0, help="-s (0 = the point's pop limit)")
    p.add_argument("--sentences", type=int, default=0, help="first N lines (0 = all)")
    p.add_argument("--short-words", type=int, default=12, help="search errors on lines of at most this many words")
    p.add_argument("--reference-widths", default="1000,5000", help="stack sizes of the reference search")
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=1)
    p.add_argument("--out", required=True)
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..benchutil import RowWriter, model_path, parse_int_list, require_range
    from ..decode.compare import read_lines
    from ..decode.configs import points, sweep
    from ..decode.cube import QUEUES, STACKS
    from ..decode.model import PhraseModel
    from ..decode.reference import near_exact
    from ..ioutil import atomic_open

    from ..protocol import Protocol

    protocol = Protocol.from_args(args)
    require_range("--sentences", args.sentences, 0, 10**7)
    require_range("--short-words", args.short_words, 0, 100)
    require_range("--queue-pop-limit", args.queue_pop_limit, 1, 10**7)
    require_range("--stack-size", args.stack_size, 0, 10**6)
    pops = parse_int_list(args.pop_limits, 1, 10**7, "--pop-limits")
    widths = tuple(parse_int_list(args.reference_widths, 1, 10**6, "--reference-widths"))
    stacks = [s for s in args.stacks.split(",") if s]
    queues = [q for q in args.queues.split(",") if q]
    for name, got, known in (("--stacks", stacks, STACKS), ("--queues", queues, QUEUES)):
        bad = [x for x in got if x not in known]
        if bad:
            raise ValueError(f"{name}: unknown {', '.join(bad)} (one of {', '.join(known)})")
    src, refs = read_lines(args.input), read_lines(args.reference)
    if len(src) != len(refs):
        raise ValueError(f"{args.input}: {len(src)} lines, but {args.reference} has {len(refs)}")
    n = args.sentences or len(src)
    short = [x for x in src if 0 < len(x.split()) <= args.short_words]
    model = PhraseModel(args.config)
    pts = points(pops, stacks, args.queue_pop_limit, queues)
    refs_short = near_exact(model, short, widths) if short else []
    with atomic_open(args.out) as out, tqdm(total=len(pts) * args.repeats, disable=not args.progress) as bar:
        rows = RowWriter("moses2_search", out, fixed={"model": model_path(args.config), "input": model_path(args.input)})
        sweep(model, src[:n], refs[:n], short, refs_short, pts, protocol, args.stack_size,
              lambda **r: rows.emit(reference_widths=",".join(map(str, widths)),
                                    reference_seconds=round(sum(x.seconds for x in refs_short), 3), **r),
              bar, rows)
    return 0
