"""`smtbench report moses_decode`: our decoders beside the live Moses2 / Moses v1 (same model, same run), and
beside the oracle's runs where those rows exist."""
from __future__ import annotations

import argparse

from ..counts import add_counts_option
from ..experiments import add_verb

#: the rows `bench moses_decode` writes (one experiment name per search)
DECODE_ROWS = ("decode_normal", "decode_cube")


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = add_verb(groups["report"], "moses_decode", [],
                 help="ours vs live Moses2/Moses v1 tables from `bench moses_decode --peers` rows",
                 description="--rows/--cube-rows: rows of `bench moses_decode --search normal|cube --peers ...` (the live "
                             "comparison); --oracle-rows/--oracle-cube-rows: rows of `bench moses_decode --oracle ...` on the "
                             "oracle's model, added as a second table where present.")
    p.add_argument("--rows", nargs="+", required=True, help="rows of `bench moses_decode --search normal`")
    p.add_argument("--table", required=True, help="output stem (.csv and .md)")
    p.add_argument("--cube-rows", nargs="+", default=None, help="rows of `bench moses_decode --search cube`")
    p.add_argument("--cube-table", default=None, help="output stem for the cube-pruning table")
    p.add_argument("--oracle-rows", default=None, help="rows of the oracle-model normal run (optional)")
    p.add_argument("--oracle-cube-rows", default=None, help="rows of the oracle-model cube run (optional)")
    p.add_argument("--oracle-table", default=None, help="output stem of the oracle normal table")
    p.add_argument("--oracle-cube-table", default=None, help="output stem of the oracle cube table")
    p.add_argument("--metrics", help="regression metrics CSV")
    add_counts_option(p)
    p.set_defaults(func=run)


def _table(rows, stem: str, title: str, counts: str | None = None, search: str = "normal") -> None:
    """One table; a live table takes the count columns of ``search``'s count points from ``counts``."""
    from ..report import moses_decode as md
    from ..report.common import COUNT_NOTE, INTERVAL_NOTE, write_table

    if "system" in rows and rows.kind.isin(["peer", "peer_timing"]).any():
        write_table(md.with_counts(md.live_table(rows), counts, search), stem, title,
                    notes=md.live_notes(rows) + " " + INTERVAL_NOTE + (" " + COUNT_NOTE if counts else ""))
    elif (rows.kind == "quality").any() and any(c.startswith("m2-") for c in rows.columns):
        fn = md.cube_table if (rows[rows.kind == "quality"].search == "cube").all() else md.normal_table
        write_table(fn(rows), stem, title + " (the oracle's recorded runs: labelled, no ratio)", notes=md.NOTES)
    else:
        raise ValueError(f"{stem}: the rows have neither live peers (bench moses_decode --peers) nor oracle runs")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..report.common import read_rows

    rows = read_rows(args.rows, DECODE_ROWS)
    _table(rows, args.table, "Normal stack search: ours vs Moses2 and Moses v1, same model, same run", args.counts)
    frames = [rows]
    if args.cube_rows and args.cube_table:
        cube = read_rows(args.cube_rows, DECODE_ROWS)
        frames.append(cube)
        _table(cube, args.cube_table, "Cube pruning: ours vs Moses2, same model, same run", args.counts, "cube")
    for path, stem, title in ((args.oracle_rows, args.oracle_table, "Normal stack search vs Moses2 and Moses v1"),
                              (args.oracle_cube_rows, args.oracle_cube_table, "Cube pruning vs Moses2")):
        if path and stem:
            o = read_rows([path], DECODE_ROWS)
            frames.append(o)
            _table(o, stem, title + ", oracle model, dev books")
    if args.metrics:
        from ..report import metrics
        metrics.write(metrics.moses_decode(pd.concat(frames, ignore_index=True)), args.metrics)
    return 0
