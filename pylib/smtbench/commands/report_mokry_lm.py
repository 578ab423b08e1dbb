"""`smtbench report mokry_lm`: Mokry 2016 Table 3.3 and Fig 3.5 (and smoke metrics) from `smtbench bench mokry_lm`
rows."""
from __future__ import annotations

import argparse

from ..counts import add_counts_option
from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "mokry_lm", [],
                 help="Mokry Table 3.3 (best automaton speed-up per model size) and Fig 3.5 from LM rows")
    p.add_argument("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench mokry_lm`")
    p.add_argument("--table", help="output stem for Table 3.3 (.csv and .md)")
    p.add_argument("--figure", help="output PNG for Fig 3.5")
    p.add_argument("--metrics", help="output CSV of regression metrics (smtbench.report.metrics.mokry_lm)")
    add_counts_option(p)
    p.set_defaults(func=run)


NOTES = ("Ours: probing-hash LM (16-byte entries, 1.5 buckets per n-gram, KenLM's query semantics), one thread, "
         "the test document pre-converted to ids and repeated to >= the sweep's query count; min over repeats; "
         "speed-up = sequential ns / best automaton ns from the same run; every backend's log10 sum is "
         "bit-identical (checked in the run). kenlm_module_ns: the `kenlm` Python module's Model.score per "
         "sentence on the same lines (includes a Python call per sentence and string handling per word); "
         "sequential_vs_kenlm = kenlm_module_ns / sequential_ns. kenlm_probing_cpp / kenlm_trie_cpp: KenLM's own "
         "kenlm_benchmark -q -t 1 on build_binary models of the same ARPA, interleaved with ours in every repeat "
         "(wall time excluding load, with its reader thread feeding ids from the page cache; ours times the C loop "
         "over an in-memory array) - the headline peers. *_line_*: the same LM probed from each n-gram's cache "
         "line; sequential_pf_*: the sequential walk with every order's bucket requested when a query starts "
         "(csrc/lmprobe.c). Rows record process_anon_huge_mib (memory actually on huge pages). "
         "Synthetic models were estimated on text sampled "
         "from a model of the shipped corpus. paper_*: the thesis row of the nearest model size "
         "(Mokry 2016, Table 3.3; KenLM models of 11 MB to 137 GB).")


def run(args: argparse.Namespace) -> int:
    from ..report import mokry_lm as ml
    from ..report.common import COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows, "mokry_lm")
    if args.table:
        write_table(ml.with_counts(ml.table3_3(rows), args.counts), args.table,
                    "Mokry 2016 Table 3.3: best automaton-queue speed-up per model size", notes=NOTES + " " + INTERVAL_NOTE
                    + (" " + COUNT_NOTE if args.counts else ""))
    if args.figure:
        save_figure(ml.fig3_5(rows), args.figure)
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.mokry_lm(rows), args.metrics)
    return 0
