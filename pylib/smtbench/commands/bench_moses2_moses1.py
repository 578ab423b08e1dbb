"""`smtbench bench moses2_moses1` (old name: `bench moses1`; the sweep: experiments/moses2_moses1.py): the Moses2
paper's Figs 1, 2, 10 with the live Moses v1 (its phrase-table and lexicalized-reordering implementations, its speed
against threads), decoding time = whole input minus a one-line run of the same command."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "moses2_moses1", ["moses1"],
                 help="Moses v1 decoding time per phrase-table / reordering storage and thread count "
                      "(Moses2 paper Figs 1, 2, 10; needs `make moses`)")
    p.add_argument("--model", action="append", required=True, metavar="NAME=INI",
                   help="a moses.ini with a PhraseDictionaryMemory text table (repeatable; the first is the main "
                        "model)")
    p.add_argument("--input", required=True, help="source sentences")
    p.add_argument("--sentences", type=int, default=0, help="the first N lines (0 = all)")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--phrase-tables", default="memory,probing", help="memory, probing, compact")
    p.add_argument("--reorderings", default="memory,tree", help="memory, tree, compact")
    p.add_argument("--search", choices=["normal", "cube"], default="normal")
    p.add_argument("-s", "--stack-size", type=int, default=200)
    p.add_argument("--pop-limit", type=int, default=400)
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=2)
    p.add_argument("--workdir", required=True, help="binarized tables, variant moses.ini files")
    p.add_argument("--out", help="rows (JSON lines)")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import moses2_moses1
    return moses2_moses1.main(args)
