"""`smtbench bench mokry_hash` (old name: `bench hash`): Mokry §3.1 — linear-probing lookups, plain vs.
through a prefetch queue. The sweep: experiments/mokry_hash.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "mokry_hash", ["hash"],
                 help="hash-table lookups with and without a prefetch queue (Mokry §3.1, Table 3.2, Fig 3.2)")
    p.add_argument("--table-mib", type=int, required=True,
                   help="table size in MiB (16 bytes per bucket; 8 in layout 'keys')")
    p.add_argument("--variants", default="kv",
                   help="comma list of LAYOUT[:nohuge], all held in memory and interleaved: kv (Mokry's 16-byte "
                        "key+value entries, the paper-faithful table), keys (KenLM's probing_hash_table_benchmark "
                        "protocol: 8-byte keys, no values), kv-line (kv probing from the ideal bucket's 64-byte "
                        "line), split (key lines apart from value lines), split-pf (split, the queue also prefetching the "
                        "value line), split-ovf / split-ovf-pf / kv-line-ovf (split / split-pf / kv-line with a "
                        "per-line overflow mark: a miss stops at its line unless an insertion probed past it); "
                        "':nohuge' = plain 4 KiB pages")
    p.add_argument("--queue-sizes", default="0-16", help="e.g. 0-16 or 0,2,4,8 (0 = plain lookups)")
    p.add_argument("--threads", default="1", help="comma list of thread counts, e.g. 1,2")
    p.add_argument("--lookups", type=int, default=2_000_000, help="lookups per measurement (split over threads)")
    p.add_argument("--mode", default="miss", help="hit, miss or hit,miss")
    from ..protocol import Protocol
    Protocol.add_arguments(p)
    p.add_argument("--load-factor", type=float, default=2 / 3)
    p.add_argument("--sizing", choices=["pow2", "mod"], default="pow2")
    p.add_argument("--burnin", type=int, default=4096, help="untimed lookups per thread first (Mokry: 4k)")
    p.add_argument("--pin", action="store_true", help="pin thread i to CPU i")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fill-threads", type=int, default=0, help="threads for filling (0 = all cores)")
    p.add_argument("--kenlm-peer", action="store_true",
                   help="every repeat also runs KenLM's own probing_hash_table_benchmark (tools/build_lmplz.sh; one "
                        "thread, misses, a table of the same bucket count) as a process: rows variant=kenlm-cpp")
    p.add_argument("--out", help="write rows here (atomically) instead of stdout")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import mokry_hash
    return mokry_hash.main(args)
