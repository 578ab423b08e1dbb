"""`smtbench bench moses_decode` (old name: `bench decode`): decode a test set with one of our decoders on a Moses
model, check it against the Moses oracle's outputs and the independent derivation scorer, and time it (model loading
excluded), beside the live peers of config/peers.yaml with --peers. The sweep: experiments/moses_decode.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "moses_decode", ["decode"],
                 help="decode + check against Moses' outputs + time (rows: one per timed repeat, one quality row)",
                 description="A correctness pass (n-best with segmentation, every entry rescored by the independent "
                             "derivation scorer; 1-best compared with each --oracle run: identical lines, model score "
                             "ours >= theirs - 1e-3, BLEU), then --repeats timed passes without n-best (as the oracle's "
                             "quiet timings), each checked to give the same 1-best.")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--search", choices=["normal", "cube"], default="normal")
    p.add_argument("-s", "--stack-size", type=int, default=200)
    p.add_argument("--pop-limit", type=int, default=1000, help="cube pruning's pop limit")
    p.add_argument("--input", required=True, help="source sentences")
    p.add_argument("--reference", required=True, help="reference translations (for BLEU)")
    p.add_argument("--oracle", nargs="*", default=[], metavar="PREFIX",
                   help="reference runs: PREFIX.1best and PREFIX.1best-score (e.g. the oracle's m2-normal200)")
    p.add_argument("--sentences", type=int, default=0, help="decode only the first N lines (0 = all)")
    p.add_argument("--nbest", type=int, default=10, help="n-best size of the correctness pass")
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=1)  # timed passes
    p.add_argument("--outputs", required=True, help="folder for the correctness pass' 1-best, scores, n-best")
    p.add_argument("--peers", nargs="*", default=[], metavar="NAME[,NAME...]",
                   help="live peers, entries of config/peers.yaml or a --peers-file (moses2, moses: `make moses`; "
                        "a user's own decoder: one entry): decode the same input with the same model and search "
                        "settings, check their 1-best lines against ours (the identity rule), and time each beside "
                        "ours as a process in every repeat (alternating order; loading excluded alike: a run on the "
                        "first line only is subtracted). A peer that is not built gets a row saying so")
    p.add_argument("--peers-file", action="append", default=[], metavar="YAML",
                   help="more peer entries (config/peers.yaml's format; an entry of the same name replaces its)")
    p.add_argument("--peer-threads", type=int, default=1, help="threads of every process-timed system (ours: 0 = "
                   "the single-threaded path when 1)")
    p.add_argument("--out", required=True, help="JSON-lines rows")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import moses_decode
    return moses_decode.main(args)
