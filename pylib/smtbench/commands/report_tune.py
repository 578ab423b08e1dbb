"""`smtbench report tune`: the tuning tables (BLEU before/after, iterations, our optimisers vs Moses')."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["report"].add_parser("tune", help="weight tuning tables (tune_bleu, tune_iterations, tune_optimizers)")
    p.add_argument("--evals", nargs="+", required=True,
                   help="`smtbench tune-eval` rows, each as SPLIT=PATH (e.g. dev=results/raw/tune/mert.dev.json)")
    p.add_argument("--iterations", nargs="*", default=[], help="`smtbench tune --summary` rows")
    p.add_argument("--peers", nargs="*", default=[], help="`smtbench tune-peers` rows")
    p.add_argument("--tables", required=True, help="output folder of tune_*.csv/.md")
    p.add_argument("--metrics", default=None, help="regression metrics CSV")
    p.add_argument("--model", default="", help="what the tuned model is, for the tables' notes (e.g. the workflow's "
                                               "own tables and LM)")
    p.set_defaults(func=run)


def _pairs(items: list[str], what: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        if "=" not in item:
            raise ValueError(f"{what} {item!r}: expected NAME=PATH")
        out.append(tuple(item.split("=", 1)))
    return out


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from ..report import tune
    from ..report.common import write_table

    evals = []
    for split, path in _pairs(args.evals, "--evals"):
        df = tune.read_jsonl([path])
        evals.append(df.assign(split=split))
    evals = pd.concat(evals, ignore_index=True)
    iters = tune.iterations(tune.read_jsonl(args.iterations)) if args.iterations else pd.DataFrame()
    out = Path(args.tables)
    inis = ", ".join(sorted(set(evals["ini"].astype(str))))
    model = f"Model: {args.model} ({inis})" if args.model else f"Model: {inis}"
    write_table(tune.bleu_table(evals, iters), out / "tune_bleu", "Weight tuning: BLEU before and after",
                notes=tune.BLEU_NOTES + model + ".\n")
    if len(iters):
        write_table(iters, out / "tune_iterations", "Weight tuning: the iterations", notes=tune.ITER_NOTES)
    peers = tune.read_jsonl(args.peers) if args.peers else None
    if args.metrics:
        from ..report import metrics
        metrics.write(metrics.tune(evals, iters, peers), args.metrics)
    if peers is not None:
        write_table(tune.peers_table(peers), out / "tune_optimizers",
                    "Our MERT / k-best MIRA beside Moses' mert / kbmira on the same n-best lists",
                    notes=tune.PEER_NOTES)
    return 0
