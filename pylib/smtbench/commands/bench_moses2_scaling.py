"""`smtbench bench moses2_scaling` (old name: `bench scaling`): the Moses2 paper's scalability experiments
(sections 4.1, 4.3-4.5). The sweep: experiments/moses2_scaling.py."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "moses2_scaling", ["scaling"],
                 help="Moses2 paper 4.1/4.3-4.5: threads, pools, cache, compression, reordering storage, profile",
                 description="Loads the text-table model and the binarized tables (every --caches size on the main table), "
                             "decodes the reference pass single-threaded on the text model (compared with --oracle where given), then "
                             "--repeats interleaved rounds over every point (table, cache, pool, threads, subset), each "
                             "checked to give the reference's 1-best and scores; then profiled runs (Table 3) and, with "
                             "--rss, peak-RSS runs in child processes.")
    p.add_argument("-f", "--config", required=True, help="moses.ini (recorded in every row as `model`)")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True, help="reference translations (BLEU)")
    p.add_argument("--oracle", default=None,
                   help="Moses2's recorded run of this model and input (PREFIX.1best, PREFIX.1best-score; the Moses "
                        "oracle's m2-cube400); without it the oracle_* fields are empty")
    p.add_argument("--table", nargs=2, action="append", required=True, metavar=("NAME", "PATH"),
                   help="a binarized table: NAME is {plain,comp}-{int,sep} (compression, reordering storage)")
    p.add_argument("--same-tables", nargs=2, default=None, metavar=("PT", "RT"),
                   help="text phrase and reordering tables with exactly the binarized tables' numbers (e.g. the "
                        "full table filtered to the input), for the reference every point must reproduce; default: "
                        "the ini's tables (then the binarized tables must have been built from them)")
    p.add_argument("--main", default="plain-int", help="the table of our configuration")
    p.add_argument("--cache", type=int, default=10000, help="our configuration's cache size")
    p.add_argument("--caches", default="0,1000,2000,4000,10000", help="Table 6's cache sizes")
    p.add_argument("--threads", default="1,2", help="thread counts")
    p.add_argument("--pop-limit", type=int, default=400)
    p.add_argument("-s", "--stack-size", type=int, default=400)
    p.add_argument("--sentences", type=int, default=0, help="first N input lines (0 = all)")
    p.add_argument("--long-words", type=int, default=0,
                   help="Fig 11: verses of more words are 'long', the others 'short' (0 = the median length)")
    from ..protocol import Protocol
    Protocol.add_arguments(p)
    p.add_argument("--profile-us", type=int, default=100, help="profile sampling period (0 = no profile rows)")
    p.add_argument("--rss", action="store_true", help="also measure peak RSS of `decode cube` child processes")
    p.add_argument("--rss-same-model", default=None, metavar="PATH",
                   help="with --rss: also a binarized table of exactly the ini's (filtered) tables, the model "
                        "Moses2's peak RSS was measured on")
    p.add_argument("--out", required=True, help="JSON-lines rows")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..experiments import moses2_scaling
    return moses2_scaling.main(args)
