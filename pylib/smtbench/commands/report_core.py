"""`smtbench report index|regress|lm-metrics`: the reports that belong to no single paper."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    g = groups["report"]
    p = g.add_parser("index", help="write the results index (README.md) for an output directory")
    p.add_argument("--outdir", required=True)
    p.add_argument("--profile", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--not-run", nargs="*", default=[], metavar="EXPERIMENT:REASON",
                   help="experiments this run could not schedule and why (listed in the index)")
    p.add_argument("--models", nargs="*", default=[], metavar="EXPERIMENT:MODEL",
                   help="the model each decoding experiment ran on (config `model`, resolved; listed in the index)")
    p.set_defaults(func=_index)

    p = g.add_parser("regress", help="compare smoke metrics with the committed baseline; draw regression plots")
    p.add_argument("--metrics", nargs="+", required=True, help="metrics CSVs (experiment,key,metric,value,kind)")
    p.add_argument("--baseline", required=True)
    p.add_argument("--tolerance", type=float, default=0.5, help="relative drift allowed for ratio metrics")
    p.add_argument("--outdir", required=True)
    p.add_argument("--update", action="store_true", help="overwrite the baseline with these metrics")
    p.add_argument("--not-run", nargs="*", default=[], metavar="EXPERIMENT:WHY",
                   help="experiments the workflow did not schedule here (its NOT_RUN): their baseline rows read "
                        "'not run', not missing")
    p.set_defaults(func=_regress)

    p = g.add_parser("history", help="each headline ratio over the commits that changed the committed rows (and the "
                                      "smoke baseline), with its 95%% interval; steps beyond the intervals flagged")
    p.add_argument("--repo", default=".", help="the git repository (default: here)")
    p.add_argument("--figures", required=True, help="folder for history_<experiment>.png")
    p.add_argument("--table", help="output stem for the points (.csv and .md)")
    p.add_argument("--counts", metavar="GLOB", help="count rows (smtbench count) drawn beside the ratios, read now and "
                                                    "at every commit that changed them; none matching: none drawn")
    p.set_defaults(func=_history)

    p = g.add_parser("lm-metrics", help="smoke metrics of the LM models (lm models-table CSV) or of the "
                                        "estimator parity (lm estimate-parity CSV)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--models-table", help="CSV of `smtbench lm models-table` (experiment lm_models)")
    src.add_argument("--parity-table", help="CSV of `smtbench lm estimate-parity` (experiment lm_estimator_parity)")
    p.add_argument("--metrics", required=True, help="output CSV of regression metrics")
    p.set_defaults(func=_lm_metrics)


def _index(args: argparse.Namespace) -> int:
    from ..report.index import write

    write(args.outdir, args.profile, args.out, not_run=args.not_run, models=args.models)
    return 0


def _regress(args: argparse.Namespace) -> int:
    from ..report.regress import run

    return run(args.metrics, args.baseline, args.tolerance, args.outdir, args.update, args.not_run)


def _history(args: argparse.Namespace) -> int:
    import subprocess
    from pathlib import Path

    from ..report import history

    try:
        h = history.collect(args.repo, counts=args.counts)
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        raise ValueError(f"--repo {args.repo}: not a git checkout with history ({exc})") from None
    Path(args.figures).mkdir(parents=True, exist_ok=True)
    made = history.write(h, args.figures, args.table)
    print(f"history: {len(h.points)} points over {h.points.commit.nunique()} commits, {int(h.points.step.sum())} "
          f"steps beyond the intervals; {len(h.counts)} counts; {len(made)} figures; {len(h.skipped)} commits unreadable", flush=True)
    return 0


def _lm_metrics(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..report import metrics

    if args.models_table:
        recs = metrics.lm_models(pd.read_csv(args.models_table))
    else:
        recs = metrics.lm_estimator_parity(pd.read_csv(args.parity_table))
    metrics.write(recs, args.metrics)
    return 0
