"""`smtbench cache` / `smtbench cache clean`: the cache of derived files (smtbench.cache)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "cache", help="show or clean smtbench's cache (decompressed ARPA copies; root: $SMTBENCH_CACHE, else "
                      "~/.cache/smtbench)",
        description="smtbench keeps decompressed copies of .gz/.xz ARPA models (the kenlm module reads only plain "
                    "ARPA) under CACHE/arpa/, keyed by the compressed file's content hash; `bench moses_decode` and "
                    "`decode rescore` make them. CACHE is $SMTBENCH_CACHE if set, else $XDG_CACHE_HOME/smtbench, "
                    "else ~/.cache/smtbench. Without an action: print the root and what it holds.")
    p.add_argument("action", nargs="?", choices=["info", "clean"], default="info",
                   help="info: the root and its size; clean: delete the cached files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..cache import cache_root, clean, usage
    root = cache_root()
    if args.action == "clean":
        files, nbytes = clean(root)
        print(f"{root}: removed {files} files, {nbytes / 2**20:.1f} MiB")
        return 0
    u = usage(root)
    print(f"cache root: {root}" + ("" if root.exists() else " (empty)"))
    for kind, (files, nbytes) in u.items():
        print(f"  {kind}: {files} files, {nbytes / 2**20:.1f} MiB")
    return 0
