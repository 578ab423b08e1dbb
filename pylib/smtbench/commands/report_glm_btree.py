"""`smtbench report glm_btree` (old name: `report glm`): gLM (Bogoychev & Lopez 2016) Tables 3-5, B-stump shares,
Figs 9-10 from `smtbench bench glm_btree` rows."""
from __future__ import annotations

import argparse

from ..counts import add_counts_option
from ..experiments import add_verb

NOTES = ("Ours: n-gram queries of the test text (each word and </s> with its context back to <s>), ids "
         "pre-converted, the text repeated to the run's query count; throughput = queries / time, best of the "
         "repeats (median beside it). B-tree CPU: csrc/btree.c, K-ary SIMD search, interleaved batch; probing LM: "
         "our KenLM-style probing hash, sequential path with KenLM state over the token stream (threads: Python "
         "threads over sentence-aligned chunks, the GIL released in C); kenlm module: Model.score per sentence "
         "(includes a Python call per sentence and string handling). B-tree CPU, stream reuse: the same batch, "
         "but a query that continues the previous one takes its back-offs from that query's longest-match walk "
         "instead of a second walk (KenLM's state rebuilt from the batch; gLM answers queries independently, "
         "so this is ours, not the paper's). Every B-tree point gives bit-identical "
         "scores, equal to the probing LM's per query within 1e-5 and to kenlm's total (checked in the run). "
         "GPU columns: '" + "no GPU lent" + "' where the run had no GPU (nothing is invented). paper_*: the "
         "published row named in paper_row (the paper has no CPU B-tree; KenLM trie is its nearest analogue). "
         "Ratios (declared: smtbench.report.glm_btree): vs_probing_1 over our 1-thread probing LM of the same run "
         "(a thread-scaling ratio for the 2-thread rows); vs_kenlm_trie_cpp only at the trie program's thread count "
         "(1): a multi-thread row, or a row timed outside the run's repeats (no run id: the kenlm module), carries "
         "none.")


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "glm_btree", ["glm"],
                 help="gLM Tables 3-5, B-stump shares, Figs 9-10 from btree rows")
    p.add_argument("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench glm_btree`")
    p.add_argument("--model", help="the Table 3 / Fig 9 / Fig 10 model (default: the one with sweeps)")
    p.add_argument("--big-model", help="Table 4: the ~5x larger model")
    p.add_argument("--order-models", default="", help="Table 5: e.g. 3=bible.o3,4=bible.o4,5=bible.o5")
    p.add_argument("--node-size", type=int, default=31, help="K of the B-stump table")
    p.add_argument("--tables", required=True, help="output directory for glm_*.csv/.md")
    p.add_argument("--figures", required=True, help="output directory for glm_fig9.png, glm_fig10.png")
    p.add_argument("--metrics", help="output CSV of regression metrics (smtbench.report.metrics.glm_btree)")
    add_counts_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..report import glm_btree
    from ..report.common import COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows, "glm_btree")
    tables, figures = Path(args.tables), Path(args.figures)
    tables.mkdir(parents=True, exist_ok=True)
    figures.mkdir(parents=True, exist_ok=True)
    model = args.model or glm_btree._main_model(rows)
    write_table(glm_btree.with_counts(glm_btree.table3(rows, model), args.counts), tables / "glm_table3",
                f"gLM Table 3: throughput (n-gram queries/s) and size on {model}",
                notes=NOTES + " " + INTERVAL_NOTE + (" " + COUNT_NOTE if args.counts else ""))
    write_table(glm_btree.bstumps(rows, model, args.node_size), tables / "glm_bstumps",
                f"gLM §5.2: B-stump share of trie nodes per order ({model})", notes=NOTES)
    if args.big_model:
        write_table(glm_btree.table4(rows, model, args.big_model), tables / "glm_table4",
                    f"gLM Table 4: throughput on {model} and the larger {args.big_model}", notes=NOTES)
    if args.order_models:
        by_order = {int(k): v for k, v in (part.split("=", 1) for part in args.order_models.split(",") if part)}
        write_table(glm_btree.table5(rows, by_order), tables / "glm_table5",
                    "gLM Table 5: throughput by n-gram order", notes=NOTES)
    save_figure(glm_btree.fig9(rows, model), figures / "glm_fig9.png")
    save_figure(glm_btree.fig10(rows, model), figures / "glm_fig10.png")
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.glm_btree(rows), args.metrics)
    return 0
