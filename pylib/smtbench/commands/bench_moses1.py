"""`smtbench bench moses1`: the Moses2 paper's Figs 1, 2, 10 with the live Moses v1 (its phrase-table and
lexicalized-reordering implementations, its speed against threads), decoding time = whole input minus a one-line
run of the same command."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["bench"].add_parser(
        "moses1", help="Moses v1 decoding time per phrase-table / reordering storage and thread count "
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
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--workdir", required=True, help="binarized tables, variant moses.ini files")
    p.add_argument("--out", help="rows (JSON lines)")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..benchutil import parse_int_list
    from ..decode.moses1 import Moses1Sweep, run_sweep
    models = {}
    for spec in args.model:
        name, sep, ini = spec.partition("=")
        if not sep or not name or not ini:
            raise ValueError(f"--model {spec!r}: expected NAME=moses.ini")
        if name in models:
            raise ValueError(f"--model {name}: given twice")
        models[name] = ini
    s = Moses1Sweep(models=models, input=args.input, workdir=args.workdir, sentences=args.sentences,
                    threads=parse_int_list(args.threads),
                    phrase_tables=[x for x in args.phrase_tables.split(",") if x],
                    reorderings=[x for x in args.reorderings.split(",") if x], search=args.search,
                    stack_size=args.stack_size, pop_limit=args.pop_limit, repeats=args.repeats)
    run_sweep(s, args.out, progress=args.progress)
    return 0
