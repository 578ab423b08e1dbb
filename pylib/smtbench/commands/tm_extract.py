"""`smtbench tm extract`: Moses phrase extraction + lexical tables."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["tm"].add_parser("extract", help="Moses phrase extraction (extract.gz, extract.inv.gz, lex.f2e, lex.e2f)")
    p.add_argument("--src", required=True, help="source side (F), one sentence per line")
    p.add_argument("--tgt", required=True, help="target side (E), line-parallel to --src")
    p.add_argument("--align", required=True, help="symmetrized alignment (i-j, i = source position)")
    p.add_argument("--outdir", required=True)
    p.add_argument("--max-length", type=int, default=7, help="longest phrase extracted (words)")
    p.add_argument("--orientation", action="store_true",
                   help="also write extract.o.gz (wbe-msd orientations, for `tm reorder`)")
    p.add_argument("--reordering-table", metavar="PATH",
                   help="also write the reordering table (as `tm reorder` writes it from extract.o) from the orientation "
                        "lines as they are made, without extract.o between (with or without --orientation)")
    p.add_argument("--reordering-smoothing", type=float, default=0.5, help="its additive smoothing (Moses: 0.5)")
    p.add_argument("--phrase-table", metavar="PATH",
                   help="write the phrase table (as `tm score` writes it from the extract file, the same bytes) "
                        "from the phrase pairs as they are made, instead of the extract files: a first pass counts "
                        "the lexical tables, a second hands each pair to the scorer as a record (no extract line "
                        "written or parsed); every output is published together at the end")
    p.add_argument("--memory", help="with --phrase-table: the scorer's sort-buffer budget (tm score --memory; default "
                                     "256M)")
    p.add_argument("--tmpdir",
                   help="with --phrase-table: where the scorer's sorted runs go (default: beside the table)")
    p.add_argument("--smoothing", choices=["none", "kn"],
                   help="with --phrase-table: the scorer's smoothing (tm score --smoothing; default none)")
    p.add_argument("--threads", type=int, default=1,
                   help="parts of the reordering table (a .gz --reordering-table) gzip-compressed in parallel, as "
                        "`tm reorder --threads`, and with --phrase-table the scorer's threads (tm score --threads); "
                        "the extraction is one thread, the reordering counts a second beside it")
    p.add_argument("--no-inverse", action="store_true",
                   help="do not write extract.inv.gz (our scorer does not read it; Moses' score and `tm score-moses` do)")
    p.add_argument("--uncompressed", action="store_true",
                   help="write extract, extract.inv and extract.o as plain text (no .gz: intermediates a next step reads "
                        "at once, as `tm score --extract outdir/extract`, need no deflate and inflate)")
    p.add_argument("--plain", action="store_true",
                   help="the pure-Python extractor (the reference the C one is tested against; same bytes, slower)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path
    from ..tm.extract import extract_files
    if args.max_length < 1:  # 0 or less would extract nothing and succeed
        raise ValueError(f"--max-length {args.max_length}: must be >= 1")
    if not 1 <= args.threads <= 256:  # (with or without a reordering table: an absurd value is refused alike)
        raise ValueError(f"--threads {args.threads}: must be in 1..256")
    out = Path(args.outdir)
    if args.phrase_table:
        return _run_tables(args, out)
    for opt in ("memory", "tmpdir", "smoothing"):  # the scorer's options: without a scorer they would do nothing
        if getattr(args, opt) is not None:
            raise ValueError(f"--{opt} is the scorer's option: it applies with --phrase-table only")
    gz = "" if args.uncompressed else ".gz"
    inv = None if args.no_inverse else str(out / f"extract.inv{gz}")
    counter = None
    if args.reordering_table:
        from ..tm.reordering import ReorderCounter
        if not args.reordering_smoothing >= 0:
            raise ValueError(f"--reordering-smoothing {args.reordering_smoothing}: must be >= 0")
        counter = ReorderCounter()
    n = extract_files(args.src, args.tgt, args.align, str(out / f"extract{gz}"), inv,
                      max_len=args.max_length, progress=not args.quiet, plain=args.plain,
                      orientation_out=str(out / f"extract.o{gz}") if args.orientation else None, reordering=counter,
                      lex_out=(str(out / "lex.f2e"), str(out / "lex.e2f")))
    print(f"extracted {n} phrase pairs -> {out}")
    if counter is not None:
        st = counter.write(args.reordering_table, args.reordering_smoothing, threads=args.threads)
        print(f"{st.pairs} phrase pairs -> {args.reordering_table}")
    return 0


def _run_tables(args: argparse.Namespace, out) -> int:
    """`tm extract --phrase-table`: tm.extract.extract_tables (the lexical, phrase and reordering tables in one
    process, no extract file)."""
    from ..benchutil import parse_size
    from ..ioutil import check_distinct_outputs, check_outputs_not_inputs
    from ..tm.extract import extract_tables
    if args.plain:
        raise ValueError("--plain with --phrase-table: the Python reference writes extract files only (run it "
                         "without --phrase-table, then tm score)")
    memory = parse_size(args.memory or "256M", "--memory", lo=1 << 20)
    lex = (str(out / "lex.f2e"), str(out / "lex.e2f"))
    orient = str(out / f"extract.o{'' if args.uncompressed else '.gz'}") if args.orientation else None
    outputs = {"--phrase-table": args.phrase_table, "--reordering-table": args.reordering_table,
               "lex.f2e": lex[0], "lex.e2f": lex[1], "--orientation": orient}
    check_distinct_outputs(outputs)
    check_outputs_not_inputs(outputs, {"--src": args.src, "--tgt": args.tgt, "--align": args.align})
    counter = None
    if args.reordering_table:
        from ..tm.reordering import ReorderCounter
        if not args.reordering_smoothing >= 0:
            raise ValueError(f"--reordering-smoothing {args.reordering_smoothing}: must be >= 0")
        counter = ReorderCounter()
    out.mkdir(parents=True, exist_ok=True)
    n, st = extract_tables(args.src, args.tgt, args.align, args.phrase_table, lex, max_len=args.max_length,
                           threads=args.threads, memory=memory, smoothing=args.smoothing or "none", tmpdir=args.tmpdir,
                           reordering=counter, reordering_out=args.reordering_table,
                           reordering_smoothing=args.reordering_smoothing, orientation_out=orient,
                           progress=not args.quiet)
    print(f"extracted {n} phrase pairs -> {st.out_lines} lines of {args.phrase_table}"
          + (f", {args.reordering_table}" if args.reordering_table else ""))
    return 0
