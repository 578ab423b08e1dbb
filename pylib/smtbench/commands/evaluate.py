"""`smtbench postprocess` (detokenize, recase/detruecase a decoder's output) and `smtbench bleu` (sacrebleu, its
signature printed, the score on the last line)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "postprocess", help="undo data preparation on a decoder's output: recase or detruecase, then detokenize",
        description="Turn a decoder's tokenized (lowercased or truecased) output back into plain text, as Moses' "
                    "recase/detruecase.perl and detokenizer.perl do (sacremoses): --recase MODEL restores each "
                    "word's most frequent case from a truecase model (`data prepare --casing truecase` or "
                    "`tm train --casing truecase` write one) and capitalises sentence starts; --detruecase only "
                    "capitalises sentence starts (for truecased output); --detokenize LANG joins the tokens with "
                    "Moses' rules for LANG.")
    p.add_argument("--input", "-i", default="-", help="tokenized text, one sentence per line (- = stdin)")
    p.add_argument("--output", "-o", default="-", help="where the text goes (- = stdout; files written atomically)")
    case = p.add_mutually_exclusive_group()
    case.add_argument("--recase", default=None, metavar="MODEL", help="a truecase model to recase lowercased text")
    case.add_argument("--detruecase", action="store_true", help="capitalise sentence starts (truecased text)")
    p.add_argument("--detokenize", default=None, metavar="LANG",
                   help="detokenize with sacremoses' rules for this language (e.g. the target's extension)")
    p.set_defaults(func=run_postprocess)

    b = groups["top"].add_parser(
        "bleu", help="corpus BLEU with sacrebleu (signature printed; the score alone on the last line)",
        description="Corpus BLEU of a hypothesis file against one or more reference files with sacrebleu. Prints "
                    "sacrebleu's full result line with its signature, then the score alone on the last line. "
                    "Tokenized text (the decoders' output before `postprocess`) wants --tokenize none; "
                    "detokenized text sacrebleu's default 13a.")
    b.add_argument("--reference", "-r", required=True, nargs="+", help="reference file(s), line-parallel")
    b.add_argument("--hypothesis", "-y", required=True,
                   help="the system's output, one line per reference line (- = stdin)")
    b.add_argument("--tokenize", default="13a",
                   help="sacrebleu tokenizer: 13a (detokenized text), none (tokenized text), intl, char, zh, ...")
    b.add_argument("--lowercase", "-lc", action="store_true", help="case-insensitive BLEU")
    b.set_defaults(func=run_bleu)


def run_postprocess(args: argparse.Namespace) -> int:
    import contextlib
    import sys

    from ..data import postprocess_lines
    from ..ioutil import atomic_open, read_lines
    lines = read_lines(args.input)  # the one line rule (``-``: standard input)
    out = postprocess_lines(lines, recase=args.recase, detruecase=args.detruecase, detokenize=args.detokenize)
    with (contextlib.nullcontext(sys.stdout) if args.output == "-" else atomic_open(args.output)) as fo:
        for line in out:
            fo.write(line + "\n")
    return 0


def run_bleu(args: argparse.Namespace) -> int:
    import sacrebleu

    from ..decode.compare import read_lines
    from ..ioutil import line_count_mismatch
    if args.reference.count("-") + (args.hypothesis == "-") > 1:
        raise ValueError("bleu: standard input (-) can stand for one file only")
    hyp = read_lines(args.hypothesis)  # `-`: standard input (ioutil.open_text)
    refs = [read_lines(r) for r in args.reference]
    for path, r in zip(args.reference, refs):
        if len(r) != len(hyp):
            raise ValueError(line_count_mismatch(path, len(r), args.hypothesis, len(hyp)) if "-" not in (
                path, args.hypothesis) else f"{path}: {len(r)} lines but {args.hypothesis} has {len(hyp)}")
    if not hyp:
        raise ValueError(f"{args.hypothesis}: empty, and so are the references: BLEU needs at least one line")
    if args.tokenize not in sacrebleu.metrics.bleu.BLEU.TOKENIZERS:
        raise ValueError(f"--tokenize {args.tokenize}: one of {', '.join(sacrebleu.metrics.bleu.BLEU.TOKENIZERS)}")
    metric = sacrebleu.metrics.BLEU(tokenize=args.tokenize, lowercase=args.lowercase)
    res = metric.corpus_score(hyp, refs)
    print(f"{res} {metric.get_signature()}")
    print(f"{res.score:.2f}")
    return 0
