"""`smtbench report moses_training`: training fidelity against Moses' tables, and BLEU of our end-to-end model."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "moses_training", [],
                 help="training fidelity + end-to-end BLEU table")
    p.add_argument("--fidelity", required=True, help="JSON of `smtbench tm fidelity`")
    p.add_argument("--ours", required=True, help="`bench moses_decode` rows with our end-to-end model")
    p.add_argument("--oracle", required=True, help="`bench moses_decode` rows with the oracle's model")
    p.add_argument("--table", required=True)
    p.add_argument("--metrics", default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..report import moses_training
    from ..report.common import read_rows, write_table
    with open(args.fidelity, encoding="utf-8") as fh:
        fidelity = json.load(fh)
    table = moses_training.training_table(fidelity, read_rows([args.ours]), read_rows([args.oracle]))
    write_table(table, args.table, "Training fidelity against Moses, and an end-to-end model",
                notes=moses_training.TRAINING_NOTES)
    if args.metrics:
        from ..report import metrics
        recs = [("moses_training", name, k, str(int(v)), "exact") for name, r in fidelity.items()
                for k, v in r.items() if k != "examples"]
        metrics.write(recs, args.metrics)
    return 0
