"""`smtbench bench mokry_decoder` (old name: `bench pipeline`): Mokry 3.3 (Table 3.4, Fig 3.6), the pipeline-tolerant
decoder. The sweep: experiments/mokry_decoder.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "mokry_decoder", ["pipeline"],
                 help="pipeline-tolerant decoder: LM off/lazy/queue x queue sizes (Mokry Table 3.4, Fig 3.6)")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--pop-limit", type=int, default=400)
    p.add_argument("-s", "--stack-size", type=int, default=400)
    p.add_argument("--queue-sizes", default="1-16")
    p.add_argument("--exact-queue-sizes", default="",
                   help="queue sizes of the queue-exact rows (the thesis' future work: items through the automaton "
                        "queue before the item queue; empty = none)")
    p.add_argument("--sentences", type=int, default=0, help="first N lines (0 = all)")
    from ..protocol import Protocol
    Protocol.add_arguments(p)
    p.add_argument("--lm", default=None, help="replace the ini's LM by this ARPA (larger models: timing only)")
    p.add_argument("--out", required=True)
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import mokry_decoder
    return mokry_decoder.main(args)
