"""`smtbench decode split` / `decode merge`: a test set decoded as independent shard jobs (decode.shards)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["decode"].add_parser(
        "split", help="split a test set into N contiguous shards to decode as independent jobs",
        description="Writes OUTDIR/shard{0..N-1}.txt, OUTDIR/whole.txt (the same sentences unsplit) and the "
                    "manifest OUTDIR/shards.json that `decode merge` checks the parts against. Decode each shard "
                    "with any `smtbench decode <search>`, then merge: the result equals one unsharded run byte for "
                    "byte (n-best ids included).")
    p.add_argument("-i", "--input", required=True, help="source text, one sentence per line (plain, .gz, .xz)")
    p.add_argument("--shards", type=int, required=True, help="number of shards (at most the number of sentences)")
    p.add_argument("--sentences", type=int, default=0, help="take the first N sentences (default 0: all)")
    p.add_argument("--outdir", required=True, help="folder of the shards and the manifest")
    p.set_defaults(func=run_split)

    m = groups["decode"].add_parser(
        "merge", help="merge the outputs of sharded decoding in input order",
        description="Concatenates the 1-best (and score) parts in shard order and rewrites the n-best parts' "
                    "sentence ids to the global ids; a part whose line count differs from its shard's (truncated, "
                    "stale, foreign), whose last line has no newline, or an n-best part missing a sentence is "
                    "refused with one line naming it, and nothing is written: every part is checked and every "
                    "output written whole before any of -o, --scores, --n-best replaces a file.")
    m.add_argument("--manifest", required=True, help="shards.json of `decode split`")
    m.add_argument("--outputs", nargs="+", required=True, help="the shards' 1-best files, in shard order")
    m.add_argument("-o", "--output", required=True, help="the merged 1-best")
    m.add_argument("--n-best-parts", nargs="+", default=[], help="the shards' n-best lists, in shard order")
    m.add_argument("--n-best", default=None, help="the merged n-best list")
    m.add_argument("--scores-parts", nargs="+", default=[], help="the shards' --scores files, in shard order")
    m.add_argument("--scores", default=None, help="the merged scores")
    m.set_defaults(func=run_merge)


def run_split(args: argparse.Namespace) -> int:
    from ..decode.shards import split

    split(args.input, args.shards, args.outdir, args.sentences)
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from ..decode.shards import merge

    merge(args.manifest, args.outputs, args.output, nbests=args.n_best_parts, nbest_out=args.n_best,
          scores=args.scores_parts, scores_out=args.scores)
    return 0
