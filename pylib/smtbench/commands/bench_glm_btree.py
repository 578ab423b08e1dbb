"""`smtbench bench glm_btree` (old name: `bench btree`): gLM's B-tree trie LM (Bogoychev & Lopez 2016, §5) against
our probing LM, KenLM's C++ models and the kenlm module -- Table 3, Figs 9-10, and the rows Tables 4-5 read. The
sweep: experiments/glm_btree.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "glm_btree", ["btree"],
                 help="gLM B-tree trie LM: throughput vs probing LM / kenlm, node size, batch size (gLM §5)")
    p.add_argument("--arpa", required=True, help="ARPA model (plain, .gz or .xz)")
    p.add_argument("--text", required=True, help="tokenized text whose n-grams are the queries")
    p.add_argument("--name", help="model name in the rows (default: from the file name)")
    p.add_argument("--node-size", type=int, default=31, help="K for the table and batch sweeps (paper: 31)")
    p.add_argument("--node-sizes", default="", help="Fig 9 sweep, e.g. 5,7,15,23,31,33,47,59 (empty = none)")
    p.add_argument("--batch-sizes", default="", help="Fig 10 sweep, e.g. 10,100,1000,10000,100000,1000000")
    p.add_argument("--threads", default="1", help="Table 3 thread counts, e.g. 1,2 (0 = all cores)")
    p.add_argument("--interleave", type=int, default=8, help="queries in flight per thread (0/1 = none)")
    from ..protocol import Protocol
    Protocol.add_arguments(p)
    p.add_argument("--min-queries", type=int, default=1_000_000, help="tile the text to at least this many")
    p.add_argument("--max-lines", type=int, default=0, help="use only the first lines of the text (0 = all)")
    p.add_argument("--no-probing", action="store_true", help="skip our probing LM rows")
    p.add_argument("--no-stream-reuse", action="store_true",
                   help="skip the B-tree rows with stream reuse (back-offs from the previous row's walk)")
    p.add_argument("--no-kenlm", action="store_true", help="skip the kenlm module rows")
    p.add_argument("--kenlm-binary", action="append", default=[], metavar="KIND=PATH",
                   help="KenLM's own model of the same ARPA (build_binary probing|trie), timed by kenlm_benchmark "
                        "-q -t 1 in every repeat beside ours (repeatable)")
    p.add_argument("--no-gpu", action="store_true", help="do not try the GPU even when one is there")
    p.add_argument("--out", help="write rows here (atomically) instead of stdout")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import glm_btree
    return glm_btree.main(args)
