"""`smtbench bench mediani_scoring` (old name: `bench tmscore`; Table 2: `bench mediani_scoring_bleu`, old name
`bench tmscore-bleu`; the sweeps: experiments/mediani_scoring.py): Mediani Tables 1/3/4 analogues (phrase-scoring
time vs threads, memory budget, corpus size; ours vs Moses' own score/consolidate, the in-memory baseline and the
sort pipeline; the distributed form with K partitions)."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def _scoring_inputs(p: argparse.ArgumentParser) -> None:
    """The extract files and lexical tables both verbs score."""
    p.add_argument("--extract", required=True)
    p.add_argument("--extract-inv", required=True)
    p.add_argument("--lex-f2e", required=True)
    p.add_argument("--lex-e2f", required=True)


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["bench"], "mediani_scoring", ["tmscore"],
                 help="phrase scoring: ours vs in-memory vs sort pipeline (Mediani)")
    _scoring_inputs(p)
    p.add_argument("--workdir", required=True, help="inputs per fraction, tables, sorted runs")
    p.add_argument("--fractions", default="0.25,0.5,1,4", help="corpus fractions; integers > 1 replicate")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--memory", default="64M,256M", help="our sort budgets")
    p.add_argument("--systems", default="ours,memory,sort,moses",
                   help="ours, memory (pandas), sort (Moses-style pipeline in C), moses (Moses' own programs)")
    p.add_argument("--src", help="source corpus (F): with --tgt and --align, Moses' extract runs once and its "
                                 "extract files are checked against --extract/--extract-inv")
    p.add_argument("--tgt", help="target corpus (E)")
    p.add_argument("--align", help="symmetrised alignment (F-E points)")
    p.add_argument("--memory-max-fraction", type=float, default=1.0, help="run pandas only up to this fraction")
    p.add_argument("--sort-memory", default="256M")
    p.add_argument("--partitions", default="1,2,4", help="distributed form (§3.3); empty for none")
    p.add_argument("--partition-fraction", type=float, default=1.0)
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=2)
    p.add_argument("--out", help="rows (JSON lines), written atomically")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)

    p = add_verb(groups["bench"], "mediani_scoring_bleu", ["tmscore-bleu"],
                 help="Mediani Table 2: BLEU of our cube decoder with Moses' phrase table and with ours")
    _scoring_inputs(p)
    p.add_argument("--ours", required=True, help="our phrase table (`tm score` on the same extract)")
    p.add_argument("--reordering-table", required=True)
    p.add_argument("--lm", required=True, help="ARPA LM")
    p.add_argument("--order", type=int, required=True)
    p.add_argument("--input", required=True, help="source sentences")
    p.add_argument("--reference", required=True)
    p.add_argument("--sentences", type=int, default=0, help="the first N lines (0 = all)")
    p.add_argument("--pop-limit", type=int, default=400)
    p.add_argument("-s", "--stack-size", type=int, default=400)
    p.add_argument("--threads", type=int, default=1, help="Moses' scoring (as `tm score-moses --threads`)")
    p.add_argument("--memory", default="256M", help="sort -S of Moses' pipeline")
    p.add_argument("--workdir", required=True, help="Moses' table, the filtered tables and models, the outputs")
    p.add_argument("--out", required=True, help="rows (JSON lines)")
    p.set_defaults(func=run_bleu)


def run_bleu(args: argparse.Namespace) -> int:
    from ..experiments import mediani_scoring
    return mediani_scoring.main_bleu(args)


def run(args: argparse.Namespace) -> int:
    from ..experiments import mediani_scoring
    return mediani_scoring.main(args)
