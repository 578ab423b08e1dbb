"""`smtbench data prepare`: split, tokenize and case any parallel corpus (the shipped Bible corpus by default)."""
from __future__ import annotations

import argparse

BIBLE = "resources/bible-es-en/es-en.tsv.xz"


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    d = groups["top"].add_parser("data", help="parallel corpus preparation (any language pair)")
    sub = d.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")
    p = sub.add_parser(
        "prepare", help="split a parallel corpus into train/dev/test, tokenize (sacremoses) and case it",
        description="Split a parallel corpus into train/dev/test and write OUTDIR/{train,dev,test}.{F,E} "
                    "(tokenized with sacremoses, Moses' rules with escape=False, and cased as --casing says), "
                    "OUTDIR/{dev,test}.raw.{F,E} (the untouched text, the references of a detokenized BLEU) and "
                    "OUTDIR/{train,dev,test}.ref (each line's reference: a TSV's --ref-column, else its line "
                    "number in the input). Input: two line-parallel plain files (--text), or a TSV whose columns "
                    "are named by its first line or by --columns. With no input options it prepares the "
                    f"shipped Bible corpus ({BIBLE}: ref, es, en; split by whole books) as the workflow does.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--tsv", default=BIBLE,
                     help="a TSV (plain/.gz/.xz) with one column per side (and optionally a reference column)")
    src.add_argument("--text", nargs=2, metavar=("F_FILE", "E_FILE"),
                     help="two line-parallel plain-text files (plain/.gz/.xz) instead of a TSV")
    p.add_argument("--f", default="es", metavar="NAME",
                   help="the source side: its TSV column and its output extension (and tokenizer language, "
                        "unless --f-lang)")
    p.add_argument("--e", default="en", metavar="NAME", help="the target side, as --f")
    p.add_argument("--columns", default=None, metavar="NAME,NAME,...",
                   help="the TSV's column names, for a TSV without a header line (default: read from its first "
                        "line; the shipped corpus is recognised as ref,es,en)")
    p.add_argument("--ref-column", default=None, metavar="NAME",
                   help="a TSV column of line references written to {split}.ref (default: line numbers)")
    p.add_argument("--split", choices=["auto", "books", "tail", "lines"], default="auto",
                   help="books: the Bible corpus' whole held-out books; tail: train, then the last --dev lines "
                        "before the last --test lines, in corpus order; lines: --dev/--test are files of 1-based "
                        "line numbers; auto: books for Bible verse references with no --dev/--test, else tail")
    p.add_argument("--dev", default=None, metavar="N|FRACTION|FILE",
                   help="dev size: a line count (500), a fraction (0.05 or 5%%), or with --split lines a file of "
                        "line numbers")
    p.add_argument("--test", default=None, metavar="N|FRACTION|FILE", help="test size, as --dev")
    p.add_argument("--casing", choices=["lower", "keep", "truecase"], default="lower",
                   help="lowercase, keep the text's case, or truecase (sacremoses' truecaser trained on the train "
                        "split, model saved as OUTDIR/truecase-model.NAME; `smtbench postprocess` undoes it)")
    p.add_argument("--no-tokenize", dest="tokenize", action="store_false",
                   help="the text is tokenized already (only whitespace is normalised)")
    p.add_argument("--f-lang", default=None, help="sacremoses language of the source side (default: --f)")
    p.add_argument("--e-lang", default=None, help="sacremoses language of the target side (default: --e)")
    p.add_argument("--outdir", default="work/data", help="where the splits go")
    p.add_argument("--progress", action="store_true", help="print each split as it is tokenized")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import prepare
    if args.split != "lines":
        for opt in ("dev", "test"):
            v = getattr(args, opt)
            if v is not None and not any(ch.isdigit() for ch in v):
                raise ValueError(f"--{opt} {v!r}: give a line count or a fraction (a file of line numbers needs "
                                 "--split lines)")
    counts = prepare(None if args.text else args.tsv, args.outdir, progress=args.progress,
                     text=tuple(args.text) if args.text else None, f=args.f, e=args.e,
                     columns=args.columns.split(",") if args.columns else None, ref=args.ref_column,
                     split=args.split, dev=args.dev, test=args.test, casing=args.casing, tokenize=args.tokenize,
                     f_lang=args.f_lang, e_lang=args.e_lang)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0
