"""`smtbench report moses2_moses1`: the Moses2 paper's Figs 1, 2 and 10 (Moses v1 alone) from `bench moses2_moses1`
rows."""
from __future__ import annotations

import argparse

from ..experiments import add_verb


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "moses2_moses1", [],
                 help="the Moses2 paper's Figs 1, 2, 10 (live Moses v1)")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--tables", required=True, help="folder for moses2_fig{1,2,10}.{csv,md}")
    p.add_argument("--figures", required=True, help="folder for moses2_fig{1,2,10}.png")
    p.add_argument("--metrics", default=None, help="regression metrics CSV (smtbench.report.metrics.moses2_moses1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..report import moses2_moses1 as mm
    from ..report.common import read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moses2_moses1")
    t, f = Path(args.tables), Path(args.figures)
    r0 = rows.iloc[0]
    cpu = f"{r0.machine_cpu}, {r0.machine_cores} cores" if "machine_cpu" in rows else "this machine"
    search = (f"cube pruning, pop limit {int(r0.pop_limit)}, -s {int(r0.stack_size)}" if r0.search == "cube"
              else f"normal search, -s {int(r0.stack_size)}")
    notes = (f"Moses v1 (`moses`, built by `make moses`), {search}, on the first {int(r0.sentences)} dev verses; "
             f"model `{r0.model}` first (the workflow's own: our alignment, tables and LM, `tm model`'s moses.ini, "
             f"filtered to the input), other models after it. Each variant is that moses.ini with one feature's "
             f"storage changed, the binary tables made from its text tables by Moses' own programs. Decoding time "
             f"= wall time of the whole input minus wall time of the same command on its first line (loading, "
             f"process start, one sentence), both in the same repeat; words/s over every line but the first; min "
             f"over interleaved repeats (median beside it) on {cpu}. lines_differing: 1-best lines that differ from "
             f"the model's in-memory/in-memory 1-thread run. paper_*: the paper's statements about its figure "
             f"(its figures carry no numbers; a 16-core/32-thread server, 800,000 Arabic-English sentences).")
    write_table(mm.fig1(rows), t / "moses2_fig1",
                "Moses2 paper Fig 1: Moses decoding time with different phrase-table implementations", notes=notes)
    write_table(mm.fig2(rows), t / "moses2_fig2",
                "Moses2 paper Fig 2: Moses decoding time with different lexicalized-reordering implementations",
                notes=notes)
    write_table(mm.fig10(rows), t / "moses2_fig10", "Moses2 paper Fig 10: Moses decoding speed against threads",
                notes=notes)
    for which in ("fig1", "fig2", "fig10"):
        save_figure(mm.figure(rows, which), f / f"moses2_{which}.png")
    if args.metrics:
        from ..report import metrics

        metrics.write(metrics.moses2_moses1(rows), args.metrics)
    return 0
