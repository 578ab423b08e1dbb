"""`smtbench bench mokry_lm` (old name: `bench lm`; the sweep: experiments/mokry_lm.py): Mokry §3.2 — scoring a
document with the probing LM, sequentially and through the automaton queue (queue sizes 1-16), plus the `kenlm`
module's `score` on the same text."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "mokry_lm", ["lm"],
                 help="LM scoring: sequential vs. automaton queue (Mokry §3.2, Table 3.3, Fig 3.5)")
    p.add_argument("--arpa", required=True, help="ARPA model (plain, .gz or .xz)")
    p.add_argument("--text", required=True, help="test document, one tokenized sentence per line")
    p.add_argument("--name", help="model label in the rows (default: the file name)")
    p.add_argument("--queue-sizes", default="1-16", help="automaton queue sizes, e.g. 1-16 or 1,2,4,8")
    from ..protocol import Protocol
    Protocol.add_arguments(p)
    p.add_argument("--min-queries", type=int, default=1_000_000,
                   help="repeat the document until at least this many queries (0 = once)")
    p.add_argument("--max-lines", type=int, default=0, help="use only the first N lines (0 = all)")
    p.add_argument("--backends", default="sequential,automaton",
                   help="comma list of registered backends; 'automaton' and 'automaton-line' expand over --queue-sizes; "
                        "'-line' = the same LM probed from each n-gram's cache line")
    p.add_argument("--no-kenlm", dest="kenlm", action="store_false",
                   help="skip the row for the kenlm module's Model.score")
    p.add_argument("--kenlm-binary", action="append", default=[], metavar="KIND=PATH",
                   help="KenLM's own model of the same ARPA (build_binary probing|trie), timed by kenlm_benchmark "
                        "-q -t 1 in every repeat beside ours (repeatable: probing=... trie=...)")
    p.add_argument("--multiplier", type=float, default=1.5, help="probing buckets per n-gram (KenLM: 1.5)")
    p.add_argument("--lock", help="hold an flock on this file while timing only (e.g. /tmp/smtbench-bench.lock); "
                   "loading the model happens outside it")
    p.add_argument("--out", help="write rows here (atomically) instead of stdout")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import mokry_lm
    return mokry_lm.main(args)
