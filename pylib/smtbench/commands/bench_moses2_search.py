"""`smtbench bench moses2_search` (old name: `bench cube-configs`): the Moses2 paper's Table 4 / Fig 6 (stack
configurations x pop limits) and Table 5 (queue configurations), with the search errors of every point on the short
sentences. The sweep: experiments/moses2_search.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "moses2_search", ["cube-configs"],
                 help="cube pruning stack/queue configurations x pop limits, search errors "
                      "(the Moses2 paper's Tables 4-5, Fig 6)",
                 description="Decodes the first --sentences lines at every point, --repeats interleaved timed passes "
                             "(model loading excluded), and counts search errors on every line of at most --short-words "
                             "source words against a near-exact reference (normal search, no beam, exact "
                             "recombination, stack sizes --reference-widths; confirmed when the two widest agree, "
                             "exact when the widest pruned nothing).")
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
    from ..experiments import moses2_search
    return moses2_search.main(args)
