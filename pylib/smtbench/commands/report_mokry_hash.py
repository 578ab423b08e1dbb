"""`smtbench report mokry_hash`: Mokry 2016 Table 3.2 and Fig 3.2 from `bench mokry_hash` rows."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "mokry_hash", [],
                 help="Mokry Table 3.2 and Fig 3.2 (and smoke metrics) from hash rows")
    p.add_argument("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench mokry_hash`")
    p.add_argument("--table", help="output stem for Table 3.2 (.csv and .md)")
    p.add_argument("--figure", help="output PNG for Fig 3.2")
    p.add_argument("--layouts-table", help="output stem for the layout table (.csv and .md)")
    p.add_argument("--layouts-figure", help="output PNG: ns per lookup against queue size per layout")
    p.add_argument("--metrics", help="output CSV of regression metrics")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import mokry_hash as mh
    from ..report.common import INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows)
    if args.table:
        t = mh.table3_2(rows)
        write_table(t, args.table, "Mokry 2016 Table 3.2: best prefetch-queue speed-up per thread count",
                    notes=f"Ours: linear-probing table of {int(t.table_mib.iloc[0])} MiB (16-byte entries, load 2/3), "
                          "min over repeats, speed-up = plain ns / best-queue ns from the same run; lines_per_lookup = mean "
                          "distinct 64-byte lines a lookup touches; line_floor_ns = independent random line reads over "
                          "the same memory (this machine's memory-level-parallelism floor per line). "
                          "paper_*: the thesis' 137 GB table, misses (Mokry 2016, Table 3.2). " + INTERVAL_NOTE)
    if args.figure:
        save_figure(mh.fig3_2(rows), args.figure)
    if args.layouts_table:
        write_table(mh.layouts(rows), args.layouts_table,
                    "Hash-table layouts beside Mokry's table: KenLM's benchmark protocol, line-aligned and split",
                    notes="One thread, min over repeats of interleaved points; every variant holds the same entries "
                          "in the same number of buckets (load 2/3; 'keys' = 8-byte key-only buckets, as KenLM's "
                          "util/probing_hash_table_benchmark_main.cc, so half the bytes). lines_per_lookup = mean "
                          "distinct 64-byte lines a lookup touches (untimed, 1M queries; split layouts count the "
                          "value line of a hit); line_floor_ns = independent random line reads over the same table "
                          "in the same run; best_over_floor = best ns / that floor. ':nohuge' = plain 4 KiB pages. "
                          "kenlm-cpp (where run): KenLM's own util/probing_hash_table_benchmark beside ours in every "
                          "repeat (a process per repeat: its table of the same bucket count filled with its random "
                          "keys, the same number of random misses through its Immediate (queue 0) and PrefetchQueue "
                          "2/4/8/16, timed by its CPUTime(); tools/kenlm-probing-benchmark.patch gives it a one-size "
                          "mode and changes nothing else); vs_kenlm_benchmark = its best queue's ns / the row's best "
                          "ns (> 1: ours faster), paired per repeat, printed only where both sides were timed by one clock "
                          "(rows recording KenLM's CPUTime() against our wall clock leave it empty: issue 40, "
                          "report.common.check_like). " + INTERVAL_NOTE)
    if args.layouts_figure:
        save_figure(mh.fig_layouts(rows), args.layouts_figure)
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.mokry_hash(rows), args.metrics)
    return 0
