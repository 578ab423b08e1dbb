"""`smtbench tm model` (a Moses model folder: moses.ini + tables + LM), `smtbench tm filter`
(Moses' filter-model-given-input.pl) and `smtbench tm reweight` (a model's ini with another ini's weights)."""
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
    r = groups["tm"].add_parser("reweight", help="a moses.ini with the [weight] values of another ini of the same "
                                                 "features (e.g. `smtbench tune`'s tuned.ini, tuned on the same "
                                                 "tables filtered to other books); everything else kept")
    r.add_argument("-f", "--config", required=True, help="the model's moses.ini")
    r.add_argument("--weights", required=True, help="the moses.ini whose weights to take")
    r.add_argument("--out", required=True, help="the new moses.ini (relative table paths re-pointed to -f's)")
    r.set_defaults(func=run_reweight)


def run_model(args: argparse.Namespace) -> int:
    from ..tm.model import make_model
    ini = make_model(args.outdir, args.phrase_table, args.reordering_table, args.lm, args.order,
                     args.distortion_limit, args.table_limit)
    print(f"model -> {ini}")
    return 0


def run_filter(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ..ioutil import check_distinct_outputs, resolve_output
    from ..tm.model import filter_table, input_phrases
    outs = {f"--table {t}": Path(args.outdir) / Path(t).name for t in args.table}
    check_distinct_outputs(outs)  # two tables of one file name would overwrite each other's output
    for out in outs.values():
        resolve_output(out)
    phrases = input_phrases(args.input)
    report = {}
    for t in args.table:
        kept, read = filter_table(t, str(Path(args.outdir) / Path(t).name), phrases)
        report[t] = {"kept": kept, "read": read}
    print(json.dumps(report))
    return 0


def run_reweight(args: argparse.Namespace) -> int:
    from ..decode.ini import IniError, load_ini
    from ..tune.loop import write_ini
    model, tuned = load_ini(args.config), load_ini(args.weights)
    want = [(f.kind, f.name, f.num_features) for f in model.features]
    have = [(f.kind, f.name, f.num_features) for f in tuned.features]
    if want != have:
        extra = sorted({n for _, n, _ in have} ^ {n for _, n, _ in want})
        raise IniError(f"{args.weights}: its features differ from {args.config}'s"
                       + (f" ({', '.join(extra)})" if extra else " (kinds, order or score counts)")
                       + ": the weights of another model")
    write_ini(args.config, {f.name: f.weights for f in tuned.features}, args.out,
              note=f"Weights from {args.weights} (smtbench tm reweight).")
    print(f"reweighted -> {args.out}")
    return 0
