"""`smtbench report mediani_scoring`: Mediani et al. 2012 Tables 1-4 and the scaling figure from `bench
mediani_scoring(_bleu)` rows."""
from __future__ import annotations

import argparse

from ..counts import add_counts_option
from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "mediani_scoring", ["mediani"],
                 help="Mediani Tables 1-4 and the scaling figure")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--bleu", nargs="*", default=[], help="`bench mediani_scoring_bleu` rows (Table 2)")
    p.add_argument("--outdir", required=True, help="writes tables/mediani_table{1,2,3,4}.{csv,md}, figures/")
    p.add_argument("--metrics", help="output CSV of regression metrics (smtbench.report.metrics.mediani)")
    add_counts_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path
    from ..report import mediani_scoring as M
    from ..report.common import COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "mediani_scoring")
    out = Path(args.outdir)
    cpu = f"{rows.machine_cpu.iloc[0]}, {rows.machine_cores.iloc[0]} cores" if "machine_cpu" in rows else ""
    status = M.moses_status(rows)
    common = (f"Ours = `smtbench tm score` (C, pthreads, external-memory runs + multiway merges). Moses = Moses' own "
              f"`score` (direct, then --Inverse) and `consolidate`, GNU sort (LC_ALL=C, --parallel=threads) of the "
              f"extract files and of the inverse half between, as train-model.perl runs them (`tm score-moses`: at "
              f"1 thread one step at a time, at N threads the two sorts and the two directions side by side), on "
              f"the same uncompressed fraction files, in the same run, repeats interleaved ({status}). sort "
              f"pipeline = GNU sort + a single-threaded streaming scorer in C + consolidate (the Moses design in "
              f"our code); in-memory = pandas. Seconds are minima over repeats on {cpu}, each a whole child "
              f"process (interpreter start included for ours). Our tables were checked equal to each other "
              f"inside the benchmark, Moses' against ours pair by pair (table_check / moses_table_check: pairs, "
              f"alignments, counts, the 4 scores to Moses' printed precision). paper_*: Mediani et al. 2012 "
              f"(hours on 8/16-core machines, 13.8M-29.4M sentence pairs). allocator: the malloc Moses' score and "
              f"consolidate run with, read from the binaries by the run (smtbench.moses_peer.allocator_of). Ratios "
              f"(declared: smtbench.report.mediani_scoring): against Moses at the row's thread count, against our "
              f"sort pipeline and our 1-thread run within the run; Table 4's critical path of k > 1 partitions timed "
              f"one after another is a projection and carries no ratio." + " " + INTERVAL_NOTE)
    ext = rows[rows.system == "moses-extract"] if "system" in rows else rows.iloc[:0]
    if len(ext):
        e = ext.iloc[0]
        common += (f" Moses' `extract` on the whole corpus: {e.status}." if isinstance(e.get("status"), str) else
                   f" Moses' `extract` on the whole corpus ({e.seconds:.1f} s, not part of scoring): {e.check}.")
    write_table(M.table1(rows), out / "tables" / "mediani_table1",
                "Mediani et al. 2012 Table 1: phrase-scoring time per system (largest corpus)", notes=common)
    if args.bleu:
        bleu = read_rows(args.bleu, "mediani_bleu")
        b = bleu.iloc[0]
        write_table(M.table2(bleu), out / "tables" / "mediani_table2",
                    "Mediani et al. 2012 Table 2: BLEU with Moses' phrase table and with ours",
                    notes=(f"Our cube decoder (pop limit {b.pop_limit}, stack {b.stack_size}) on the first "
                           f"{b.sentences} dev verses, one moses.ini (`tm model`: default weights, our reordering "
                           f"table, our LM) with the phrase table from Moses' score/consolidate and with ours, each "
                           f"filtered to the input (filter-model-given-input.pl). BLEU: sacrebleu --tokenize none "
                           f"on the tokenized lowercased text. output_sha: digest of the 1-best lines (identical "
                           f"tables give identical translations). paper_*: Mediani et al. 2012 Table 2 (WMT2011 "
                           f"en-fr / fr-en; their relative frequencies KN-smoothed)."))
    write_table(M.with_counts(M.table3(rows), args.counts), out / "tables" / "mediani_table3",
                "Mediani et al. 2012 Table 3: phrase-scoring time against corpus size",
                notes=common + " paper_corpus maps our full corpus to EPPS+NC and our largest to +UN (the "
                               "smaller and the larger of the paper's two corpora); BLEU: Table 2 (mediani_table2)."
                               + (" " + COUNT_NOTE if args.counts else ""))
    write_table(M.table4(rows), out / "tables" / "mediani_table4",
                "Mediani et al. 2012 Table 4: the distributed form (partition, score with partial counts, merge)",
                notes=common + " critical_path_s = partition + slowest partition + merge (one node per "
                               "partition); seconds_min = all of it on this machine, one after another.")
    save_figure(M.fig_scaling(rows), out / "figures" / "mediani_scaling.png")
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.mediani(rows), args.metrics)
    return 0
