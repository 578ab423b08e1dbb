"""`smtbench tm reorder`: the lexicalized reordering table (wbe-msd-bidirectional-fe) from orientation files."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["tm"].add_parser(
        "reorder", help="reordering table from extract.o (as lexical-reordering-score ... 0.5 --model "
                        "'wbe msd wbe-msd-bidirectional-fe')")
    p.add_argument("--orientations", nargs="+", required=True,
                   help="extract.o files (`tm extract --orientation`); sorted ones (LC_ALL=C sort, as train-model.perl "
                        "sorts them) are counted in order with no index or sort; the table is the same either way, "
                        "in its lines' LC_ALL=C order (Moses' lexical-reordering-score's)")
    p.add_argument("--out", required=True, help="reordering table (.gz to compress)")
    p.add_argument("--smoothing", type=float, default=0.5, help="additive smoothing per class (Moses: 0.5)")
    p.add_argument("--threads", type=int, default=1,
                   help="parts of the table gzip-compressed in parallel (a .gz --out); the counting is one thread")
    p.add_argument("--plain", action="store_true",
                   help="the pure-Python scorer (the reference the C one is tested against; same bytes, slower)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tm.reordering import score_reordering
    n = score_reordering(args.orientations, args.out, args.smoothing, progress=not args.quiet, plain=args.plain,
                         threads=args.threads)
    print(f"{n} phrase pairs -> {args.out}")
    return 0
