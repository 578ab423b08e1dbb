"""`smtbench report mokry_hash`: Mokry 2016 Table 3.2 and Fig 3.2 from `bench mokry_hash` rows."""
from __future__ import annotations

import argparse

from ..experiments import add_verb
from ..counts import add_counts_option


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "mokry_hash", [],
                 help="Mokry Table 3.2 and Fig 3.2 (and smoke metrics) from hash rows")
    p.add_argument("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench mokry_hash`")
    p.add_argument("--table", help="output stem for Table 3.2 (.csv and .md)")
    p.add_argument("--figure", help="output PNG for Fig 3.2")
    p.add_argument("--layouts-table", help="output stem for the layout table (.csv and .md)")
    p.add_argument("--layouts-figure", help="output PNG: ns per lookup against queue size per layout")
    p.add_argument("--vs-kenlm-table", help="output stem for ours against KenLM's hash benchmark (.csv and .md)")
    p.add_argument("--metrics", help="output CSV of regression metrics")
    add_counts_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report import mokry_hash as mh
    from ..report.common import COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows, "mokry_hash")
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
                          "clock: what the row's times are - ours the wall clock; kenlm-cpp (where run: KenLM's own "
                          "util/probing_hash_table_benchmark beside ours in every repeat) its CPUTime(), CPU time: no "
                          "ratio crosses the two here, the comparison with KenLM is the mokry_hash_vs_kenlm table, "
                          "CPU time against CPU time. " + INTERVAL_NOTE)
    if args.vs_kenlm_table:
        write_table(mh.with_counts(mh.vs_kenlm(rows), args.counts), args.vs_kenlm_table,
                    "Hash lookups against KenLM's own probing_hash_table_benchmark: like for like, best design, "
                    "Mokry's layout",
                    notes="One thread's random misses, the table of the same bucket count (load 2/3), KenLM's "
                          "benchmark run as a process beside our points in every repeat of the same run "
                          "(tools/kenlm-probing-benchmark.patch gives it a one-size mode and changes nothing else). "
                          "clock = cpu on both sides: KenLM's benchmark reads only its CPUTime() "
                          "(CLOCK_PROCESS_CPUTIME_ID of its one-thread process, around its queue's adds and drain); "
                          "ours is the lookup thread's CPU time (CLOCK_THREAD_CPUTIME_ID) around the same loop "
                          "(cpu_ns_per_lookup of our rows; their ns_per_lookup elsewhere is the wall clock). "
                          "'like for like (headline)': our 'keys' layout (8-byte keys, as KenLM's) at KenLM's "
                          "queue sizes (0 = Immediate, 2/4/8/16: those ours swept), each side's best of the same "
                          "sizes - in each repeat for the interval, over all repeats for vs_kenlm_benchmark. "
                          "'best design of ours': the layout and queue size (of all ours swept) with the lowest CPU "
                          "time, at that queue, against KenLM's best of its sizes; 'Mokry's layout': kv (16-byte "
                          "key+value entries) at its best queue, likewise. vs_kenlm_benchmark = KenLM's ns / ours "
                          "(> 1: ours faster). Our multi-thread rows are not compared (KenLM's benchmark runs one "
                          "thread). note 're-measure': rows of ours recorded before the CPU clock (no "
                          "cpu_ns_per_lookup): KenLM's CPU time has no like partner, the ratio stays blank until "
                          "the default profile re-measures. " + INTERVAL_NOTE
                          + (" " + COUNT_NOTE if args.counts else ""))
    if args.layouts_figure:
        save_figure(mh.fig_layouts(rows), args.layouts_figure)
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.mokry_hash(rows), args.metrics)
    return 0
