"""`smtbench bench moore_quirk` (old name: `bench beam`): Moore & Quirk (2007) Figs 2-3 -- BLEU against decoding
time and against hypotheses evaluated for Pharaoh's beam search, + distortion-penalty estimation (de), + early pruning
(de+ep). The sweep: experiments/moore_quirk.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "moore_quirk", ["beam"],
                 help="Pharaoh / DE / DE+EP pruning-parameter sweep: BLEU, ms/word, hypotheses/word "
                      "(Moore & Quirk 2007, Figs 2-3)",
                 description="Decodes the first --sentences lines at every setting (t-table threshold, beam threshold, "
                             "t-table limit, beam limit; early-pruning threshold = t-table threshold) chosen by --search: "
                             "'hill-climb' (the paper's: from the most generous setting, move to the one-step-tighter "
                             "neighbour of highest BLEU, ties to fewer hypotheses, until the tightest; chosen on BLEU and "
                             "hypotheses only) or 'grid' (every combination). Repeat 0 is the exploration pass, repeats "
                             "1.. decode every point again in alternating order; outputs must not change. Thresholds are "
                             "in sum-abs-normalised natural-log score units (see `smtbench decode beam --help`).")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True, help="reference translations (BLEU)")
    p.add_argument("--variants", default="pharaoh,de,de+ep")
    p.add_argument("--mode", choices=["paper", "moses"], default="paper")
    p.add_argument("--search", choices=["hill-climb", "grid"], default="hill-climb")
    p.add_argument("--thresholds", default="0.5,1,1.5,2,2.5", help="t-table and beam thresholds (the paper's)")
    p.add_argument("--limits", default=None,
                   help="t-table and beam limits (default: the paper's 5,10,15,20,25, those above the model's "
                        "table-limit left out: Moses' 20 when the ini sets none, as `tm model` writes it)")
    p.add_argument("--pharaoh-beam-limits", default="30,35,40,45,50,60,75,100",
                   help="further beam limits for the pharaoh baseline (the paper's)")
    p.add_argument("--peers", default="",
                   help="our other searches in the same passes (Moses mode comparisons): normal:S (normal stack "
                        "search -s S), cube:P (cube pruning, pop limit P, -s P), comma-separated")
    p.add_argument("--no-cross", action="store_true",
                   help="do not decode pharaoh at de's settings and de at de+ep's (the same-settings comparisons)")
    p.add_argument("--extra-beam-limits", default="",
                   help="further beam limits for every variant (e.g. beyond a model's table-limit, which caps --limits)")
    p.add_argument("--distortion-limit", type=int, default=None, help="default: the ini's")
    p.add_argument("--every", type=int, default=1,
                   help="take every K-th line (1, 1+K, ...: a subset spread over every book), before --sentences")
    p.add_argument("--sentences", type=int, default=0, help="first N lines (0 = all)")
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=2)  # repeat 0 = the exploration pass
    p.add_argument("--out", required=True)
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import moore_quirk
    return moore_quirk.main(args)
