"""`smtbench tune-eval`: decode a set with a (tuned or default) moses.ini and score it (sacrebleu, --tokenize none)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "tune-eval", help="decode a set with a moses.ini and write its BLEU (sacrebleu --tokenize none) as a JSON row",
        description="Decodes --input with `smtbench decode <decoder>` and the ini's weights, scores the 1-best "
                    "against --reference with sacrebleu (--tokenize none: tokenized, lowercased text). Everything "
                    "after `--` goes to the decoder.")
    p.add_argument("-f", "--config", required=True, metavar="MOSES_INI")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True, nargs="+")
    p.add_argument("--decoder", choices=["normal", "cube", "beam"], default="cube")
    p.add_argument("--sentences", type=int, default=0, help="the first N lines only (0 = all)")
    p.add_argument("--label", default="", help="free text stored in the row (e.g. default / mert / mira)")
    p.add_argument("--output", default=None, help="also keep the 1-best here")
    p.add_argument("--out", required=True, help="JSON row")
    p.add_argument("decoder_args", nargs=argparse.REMAINDER, help="after `--`: options of `smtbench decode`")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    import tempfile
    from pathlib import Path

    from ..decode.ini import load_ini
    from ..ioutil import atomic_write_text, read_lines
    from ..machine import facts, git_sha, row_fields
    from ..tune.loop import (TuneOptions, _subset, decode, decoder_passthrough, sacrebleu_tok, split_weights,
                             tuneable_layout, weights_of)

    extra = decoder_passthrough(args.decoder_args)
    if args.sentences < 0:
        raise ValueError(f"--sentences {args.sentences}: must be >= 0")
    from ..ioutil import check_distinct_outputs
    check_distinct_outputs({"--out": args.out, "--output": args.output})  # one would overwrite the other
    cfg = load_ini(args.config)
    layout = tuneable_layout(cfg)
    opts = TuneOptions(decoder=args.decoder, decoder_args=extra, progress=False)
    with tempfile.TemporaryDirectory(prefix="smtbench-tune-eval-") as tmp:
        src, refs = _subset(args.input, args.reference, args.sentences, Path(tmp))
        hyp = Path(args.output) if args.output else Path(tmp) / "1best"
        seconds = decode(args.config, src, None, opts, hyp, None, Path(tmp) / "decode.log", sys.stderr)
        columns = [read_lines(r) for r in refs]
        if len(read_lines(hyp)) != len(columns[0]):
            raise ValueError(f"{args.config}: the decoder wrote a different number of lines than {refs[0]} has")
        bleu = sacrebleu_tok(hyp, columns)
    row = {"experiment": "tune", "label": args.label, "ini": args.config, "input": args.input,
           "sentences": len(columns[0]), "decoder": args.decoder, "decoder_args": " ".join(extra),
           "bleu": round(bleu, 4), "seconds": round(seconds, 3),
           "weights": split_weights(layout, weights_of(cfg, layout)), "git_sha": git_sha(),
           **row_fields(facts(with_gpu=False))}
    atomic_write_text(args.out, json.dumps(row) + "\n")
    print(json.dumps({k: row[k] for k in ("label", "sentences", "bleu")}), file=sys.stderr)
    return 0
