"""`smtbench bench tmscore`: Mediani Tables 1/3/4 analogues (phrase-scoring time vs threads, memory budget,
corpus size; ours vs the in-memory and the sort pipeline; the distributed form with K partitions)."""
from __future__ import annotations

import argparse


def _floats(t: str) -> list[float]:
    return [float(x) for x in t.split(",") if x.strip()]


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["bench"].add_parser("tmscore", help="phrase scoring: ours vs in-memory vs sort pipeline (Mediani)")
    p.add_argument("--extract", required=True)
    p.add_argument("--extract-inv", required=True)
    p.add_argument("--lex-f2e", required=True)
    p.add_argument("--lex-e2f", required=True)
    p.add_argument("--workdir", required=True, help="inputs per fraction, tables, sorted runs")
    p.add_argument("--fractions", default="0.25,0.5,1,4", help="corpus fractions; integers > 1 replicate")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--memory", default="64M,256M", help="our sort budgets")
    p.add_argument("--systems", default="ours,memory,sort")
    p.add_argument("--memory-max-fraction", type=float, default=1.0, help="run pandas only up to this fraction")
    p.add_argument("--sort-memory", default="256M")
    p.add_argument("--partitions", default="1,2,4", help="distributed form (§3.3); empty for none")
    p.add_argument("--partition-fraction", type=float, default=1.0)
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=2)
    p.add_argument("--out", help="rows (JSON lines), written atomically")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..benchutil import parse_int_list
    from ..protocol import Protocol
    from ..tm.bench import TmScoreSweep, run_sweep
    s = TmScoreSweep(
        extract=args.extract, extract_inv=args.extract_inv, lex_f2e=args.lex_f2e, lex_e2f=args.lex_e2f,
        workdir=args.workdir, fractions=_floats(args.fractions), threads=parse_int_list(args.threads),
        memory=[m for m in args.memory.split(",") if m], systems=[x for x in args.systems.split(",") if x],
        memory_max_fraction=args.memory_max_fraction, sort_memory=args.sort_memory,
        partitions=parse_int_list(args.partitions) if args.partitions.strip() else [],
        partition_fraction=args.partition_fraction, repeats=args.repeats,
        protocol=Protocol.from_args(args))
    run_sweep(s, args.out, progress=args.progress)
    return 0
