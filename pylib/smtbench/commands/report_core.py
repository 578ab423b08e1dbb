"""`smtbench report index|regress|mokry-hash|lm-metrics`."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    g = groups["report"]
    p = g.add_parser("index", help="write the results index (README.md) for an output directory")
    p.add_argument("--outdir", required=True)
    p.add_argument("--profile", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_index)

    p = g.add_parser("regress", help="compare smoke metrics with the committed baseline; draw regression plots")
    p.add_argument("--metrics", nargs="+", required=True, help="metrics CSVs (experiment,key,metric,value,kind)")
    p.add_argument("--baseline", required=True)
    p.add_argument("--tolerance", type=float, default=0.5, help="relative drift allowed for ratio metrics")
    p.add_argument("--outdir", required=True)
    p.add_argument("--update", action="store_true", help="overwrite the baseline with these metrics")
    p.set_defaults(func=_regress)

    p = g.add_parser("mokry-hash", help="Mokry Table 3.2 and Fig 3.2 (and smoke metrics) from hash rows")
    p.add_argument("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench hash`")
    p.add_argument("--table", help="output stem for Table 3.2 (.csv and .md)")
    p.add_argument("--figure", help="output PNG for Fig 3.2")
    p.add_argument("--metrics", help="output CSV of regression metrics")
    p.set_defaults(func=_mokry_hash)

    p = g.add_parser("lm-metrics", help="smoke metrics of the LM models (lm models-table CSV) or of the "
                                        "estimator parity (lm estimate-parity CSV)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--models-table", help="CSV of `smtbench lm models-table` (experiment lm_models)")
    src.add_argument("--parity-table", help="CSV of `smtbench lm estimate-parity` (experiment lm_estimator_parity)")
    p.add_argument("--metrics", required=True, help="output CSV of regression metrics")
    p.set_defaults(func=_lm_metrics)


def _index(args: argparse.Namespace) -> int:
    from ..report.index import write

    write(args.outdir, args.profile, args.out)
    return 0


def _regress(args: argparse.Namespace) -> int:
    from ..report.regress import run

    return run(args.metrics, args.baseline, args.tolerance, args.outdir, args.update)


def _lm_metrics(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..report import metrics

    if args.models_table:
        recs = metrics.lm_models(pd.read_csv(args.models_table))
    else:
        recs = metrics.lm_estimator_parity(pd.read_csv(args.parity_table))
    metrics.write(recs, args.metrics)
    return 0


def _mokry_hash(args: argparse.Namespace) -> int:
    from ..report import mokry_hash as mh
    from ..report.common import read_rows, save_figure, write_table

    rows = read_rows(args.rows)
    if args.table:
        t = mh.table3_2(rows)
        write_table(t, args.table, "Mokry 2016 Table 3.2: best prefetch-queue speed-up per thread count",
                    notes=f"Ours: linear-probing table of {int(t.table_mib.iloc[0])} MiB (16-byte entries, load 2/3), "
                          "min over repeats, speed-up = plain ns / best-queue ns from the same run; lines_per_lookup = mean "
                          "distinct 64-byte lines a lookup touches; line_floor_ns = independent random line reads over "
                          "the same memory (this machine's memory-level-parallelism floor per line). "
                          "paper_*: the thesis' 137 GB table, misses (Mokry 2016, Table 3.2).")
    if args.figure:
        save_figure(mh.fig3_2(rows), args.figure)
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.mokry_hash(rows), args.metrics)
    return 0
