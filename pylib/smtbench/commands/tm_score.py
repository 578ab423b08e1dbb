"""`smtbench tm score` (Mediani §3.1), `tm partition` / `tm merge` (the distributed form, §3.3),
`tm score-memory` (pandas, in-memory baseline), `tm score-sort` (Moses-style sort pipeline) and `tm score-moses`
(Moses' own `score` and `consolidate`, the live baseline)."""
from __future__ import annotations

import argparse


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lex-f2e", required=True, help="lex.f2e: `e f w(e|f)`")
    p.add_argument("--lex-e2f", required=True, help="lex.e2f: `f e w(f|e)`")
    p.add_argument("--out", required=True, help="phrase table (.gz: gzip members compressed in parallel)")
    p.add_argument("--smoothing", choices=["none", "kn"], default="none",
                   help="relative frequency, or Kneser-Ney (Foster et al. 2006, as Moses' consolidate)")


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    tm = groups["tm"]
    p = tm.add_parser("score", help="Mediani §3.1: multithreaded external-memory phrase scoring (C)")
    p.add_argument("--extract", required=True, nargs="+", help="extract file(s), plain or .gz")
    p.add_argument("--extract-inv", help="accepted for Moses compatibility; not needed: both directions are "
                                         "scored from --extract, as in Mediani §3")
    _common(p)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--memory", default="256M", help="sort-buffer budget, e.g. 64M")
    p.add_argument("--tmpdir", help="where sorted runs go (default: beside --out)")
    p.add_argument("--counts", action="store_true",
                   help="write partial counts `F ||| E ||| align ||| count` (a partition of §3.3)")
    p.add_argument("--weighted", action="store_true", help="inputs are partial-count files (the merge of §3.3)")
    p.add_argument("--stats", help="write the run's statistics here (JSON)")
    p.set_defaults(func=run_score)

    p = tm.add_parser("partition", help="§3.3 scatter: split an extract file into K parts by sentence")
    p.add_argument("--extract", required=True)
    p.add_argument("--parts", type=int, required=True)
    p.add_argument("--outdir", required=True, help="writes part{0..K-1}.extract.gz")
    p.set_defaults(func=run_partition)

    p = tm.add_parser("score-memory", help="in-memory baseline / oracle (pandas group-by)")
    p.add_argument("--extract", required=True, nargs="+")
    _common(p)
    p.set_defaults(func=run_memory)

    p = tm.add_parser("score-sort", help="Moses-style baseline: GNU sort + single-threaded streaming scorer")
    p.add_argument("--extract", required=True)
    p.add_argument("--extract-inv", required=True)
    _common(p)
    p.add_argument("--memory", default="256M", help="sort -S")
    p.add_argument("--tmpdir")
    p.set_defaults(func=run_sort)

    p = tm.add_parser("score-moses", help="Moses' own score (per direction, --Inverse) + GNU sort + consolidate, "
                                          "as train-model.perl runs them (needs `make moses`)")
    p.add_argument("--extract", required=True)
    p.add_argument("--extract-inv", required=True)
    p.add_argument("--lex-f2e", required=True, help="lex.f2e: `e f w(e|f)`")
    p.add_argument("--lex-e2f", required=True, help="lex.e2f: `f e w(f|e)`")
    p.add_argument("--out", required=True, help="phrase table (.gz: consolidate compresses)")
    p.add_argument("--threads", type=int, default=1,
                   help="1: one step at a time, sort --parallel=1; N: the two sorts and the two score directions "
                        "side by side, sort --parallel=N (train-model.perl -cores N -sort-parallel N)")
    p.add_argument("--memory", default="256M", help="sort -S")
    p.add_argument("--tmpdir")
    p.add_argument("--stats", help="write the stage times here (JSON)")
    p.set_defaults(func=run_moses)


def run_score(args: argparse.Namespace) -> int:
    import dataclasses
    import json
    from ..benchutil import parse_size
    from ..ioutil import atomic_write_text
    from ..tm.score import score_native
    if args.extract_inv is not None:
        import os
        if not os.path.isfile(args.extract_inv):
            raise ValueError(f"--extract-inv {args.extract_inv}: no such file (the option is accepted for Moses "
                             "compatibility and not read, but it must name a file)")
    from ..ioutil import check_outputs_not_inputs
    check_outputs_not_inputs({"--out": args.out, "--stats": args.stats},
                             {"--extract": args.extract, "--extract-inv": args.extract_inv, "--lex-f": args.lex_f2e,
                              "--lex-e": args.lex_e2f})
    st = score_native(args.extract, args.lex_f2e, args.lex_e2f, args.out, threads=args.threads,
                      memory=parse_size(args.memory, "--memory", lo=1 << 20), smoothing=args.smoothing,
                      counts_only=args.counts,
                      weighted=args.weighted, tmpdir=args.tmpdir)
    if args.stats:
        atomic_write_text(args.stats, json.dumps(dataclasses.asdict(st), indent=1) + "\n")
    return 0


def run_partition(args: argparse.Namespace) -> int:
    from ..tm.distributed import partition_extract
    for p in partition_extract(args.extract, args.parts, args.outdir):
        print(p)
    return 0


def run_memory(args: argparse.Namespace) -> int:
    from ..tm.score import score_pandas, write_table
    write_table(score_pandas(args.extract, args.lex_f2e, args.lex_e2f, smoothing=args.smoothing), args.out)
    return 0


def run_sort(args: argparse.Namespace) -> int:
    from ..benchutil import parse_size
    from ..tm.score import score_sortpipe
    if args.smoothing != "none":
        raise ValueError("score-sort implements plain relative frequency only")
    score_sortpipe(args.extract, args.extract_inv, args.lex_f2e, args.lex_e2f, args.out,
                   memory=parse_size(args.memory, "--memory", lo=1 << 20), tmpdir=args.tmpdir)
    return 0


def run_moses(args: argparse.Namespace) -> int:
    import json

    from ..benchutil import parse_size
    from ..ioutil import atomic_write_text
    from ..tm.score import score_moses
    if not 1 <= args.threads <= 1024:
        raise ValueError(f"--threads {args.threads}: must be in 1..1024")
    st = score_moses(args.extract, args.extract_inv, args.lex_f2e, args.lex_e2f, args.out, threads=args.threads,
                     memory=parse_size(args.memory, "--memory", lo=1 << 20), tmpdir=args.tmpdir)
    if args.stats:
        atomic_write_text(args.stats, json.dumps(st, indent=1) + "\n")
    return 0
