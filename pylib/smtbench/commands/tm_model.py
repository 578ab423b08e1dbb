"""`smtbench tm model` (a Moses model folder: moses.ini + tables + LM) and `smtbench tm filter`
(Moses' filter-model-given-input.pl)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["tm"].add_parser("model", help="a Moses model folder: moses.ini (train-model.perl layout, default "
                                              "weights) beside the phrase table, reordering table and LM")
    p.add_argument("--phrase-table", required=True)
    p.add_argument("--reordering-table", default=None)
    p.add_argument("--lm", required=True, help="ARPA LM (plain, .gz or .xz)")
    p.add_argument("--order", type=int, required=True, help="the LM's order")
    p.add_argument("--distortion-limit", type=int, default=6)
    p.add_argument("--table-limit", type=int, default=None,
                   help="PhraseDictionaryMemory table-limit (default: not written, Moses' 20; 0 = keep all)")
    p.add_argument("--outdir", required=True)
    p.set_defaults(func=run_model)
    f = groups["tm"].add_parser("filter", help="keep the table lines whose source phrase occurs in the input "
                                               "(Moses' filter-model-given-input.pl)")
    f.add_argument("--input", nargs="+", required=True, help="source sentences")
    f.add_argument("--table", nargs="+", required=True, help="phrase and/or reordering tables")
    f.add_argument("--outdir", required=True, help="filtered tables keep their file names here")
    f.set_defaults(func=run_filter)


def _place(src: str, dst) -> None:
    """Hard-link (or copy) a table into the model folder, atomically."""
    import os
    import shutil
    tmp = dst.with_name(f".{dst.name}.tmp")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def run_model(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from ..tm.model import write_ini
    if not 1 <= args.order <= 8:
        raise ValueError(f"--order {args.order}: must be in 1..8")
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for path in (args.phrase_table, args.reordering_table, args.lm):
        if path and not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    pt = out / ("phrase-table" + "".join(Path(args.phrase_table).suffixes[-1:]))
    _place(args.phrase_table, pt)
    rt = None
    if args.reordering_table:
        rt = out / ("reordering-table.wbe-msd-bidirectional-fe" + "".join(Path(args.reordering_table).suffixes[-1:]))
        _place(args.reordering_table, rt)
    lm = os.path.relpath(Path(args.lm).resolve(), out.resolve())
    if args.table_limit is not None and not 0 <= args.table_limit <= 10_000:
        raise ValueError(f"--table-limit {args.table_limit}: must be in 0..10000")
    write_ini(out / "moses.ini", pt.name, lm, args.order, rt.name if rt else None, args.distortion_limit,
              args.table_limit)
    print(f"model -> {out / 'moses.ini'}")
    return 0


def run_filter(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ..tm.model import filter_table, input_phrases
    phrases = input_phrases(args.input)
    report = {}
    for t in args.table:
        kept, read = filter_table(t, str(Path(args.outdir) / Path(t).name), phrases)
        report[t] = {"kept": kept, "read": read}
    print(json.dumps(report))
    return 0
