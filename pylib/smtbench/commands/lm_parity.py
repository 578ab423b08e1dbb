"""`smtbench lm estimate-parity`: our estimator against KenLM's lmplz (held-out perplexity and every n-gram)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["lm"].add_parser(
        "estimate-parity", help="our estimator vs KenLM's lmplz: held-out perplexity (kenlm module) and every "
                                "n-gram; writes a CSV and a Markdown table")
    p.add_argument("--train", required=True, help="training text")
    p.add_argument("--heldout", required=True, help="held-out text")
    p.add_argument("--orders", default="3,5")
    p.add_argument("--lmplz", default="build/lmplz/bin/lmplz", help="lmplz binary (bash tools/build_lmplz.sh)")
    p.add_argument("--discount-fallback", action="store_true", help="both estimators (say so in the table)")
    p.add_argument("--workdir", default=None, help="scratch directory (default: a temp dir)")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    import pandas as pd

    from ..ioutil import atomic_open
    from ..lm.estimate import parity

    if not Path(args.lmplz).is_file():
        raise FileNotFoundError(f"{args.lmplz}: lmplz not built (run `bash tools/build_lmplz.sh`)")
    orders = [int(x) for x in args.orders.split(",") if x.strip()]
    with tempfile.TemporaryDirectory(dir=args.workdir) as wd:
        rows = parity(args.train, args.heldout, orders, args.lmplz, wd,
                      discount_fallback=args.discount_fallback, progress=not args.quiet)
    df = pd.DataFrame(rows)
    with atomic_open(args.csv) as fh:
        df.to_csv(fh, index=False)
    show = df[["order", "heldout_tokens", "heldout_oov", "ppl_ours", "ppl_lmplz", "ppl_rel_diff", "ngrams_ours",
               "ngrams_lmplz", "max_abs_diff_logprob", "max_abs_diff_backoff", "seconds_ours", "seconds_lmplz"]]
    for c in ("order", "heldout_tokens", "heldout_oov", "ngrams_ours", "ngrams_lmplz"):
        show = show.assign(**{c: show[c].astype(str)})
    with atomic_open(args.md) as fh:
        fh.write("# Estimator parity: smtbench lm estimate vs KenLM lmplz\n\n"
                 f"Training text `{args.train}`, held-out `{args.heldout}`; perplexity by the kenlm module "
                 "(</s> counted, <s> not)"
                 + ("; both run with discount fallback" if args.discount_fallback else "") + ".\n\n")
        fh.write(show.to_markdown(index=False, floatfmt=".6g") + "\n")
    print(show.to_string(index=False))
    return 0
