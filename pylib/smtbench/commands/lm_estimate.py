"""`smtbench lm estimate`: interpolated modified Kneser-Ney, the way KenLM's lmplz computes it."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["lm"].add_parser(
        "estimate", help="estimate an interpolated modified Kneser-Ney ARPA model (lmplz's rules, C, in memory)")
    p.add_argument("--order", "-o", type=int, required=True, help="n-gram order, 2..6")
    p.add_argument("--text", required=True, help="tokenized text, one sentence per line (plain/.gz/.xz)")
    p.add_argument("--arpa", required=True, help="output ARPA (written atomically; .gz compresses)")
    p.add_argument("--memory", "-S", default="4G",
                   help="memory budget for the counting stage, e.g. 512M, 4G (the sorted tables come on top: "
                        "about 4n+16 bytes per n-gram of order n)")
    p.add_argument("--discount-fallback", nargs="*", type=float, default=None, metavar="D",
                   help="like lmplz --discount_fallback: discounts for an order whose counts-of-counts give bad "
                        "ones (no values = 0.5 1 1.5)")
    p.add_argument("--synthetic-source", default=None,
                   help="label the model synthetic (its text was sampled from this ARPA); also set automatically "
                        "when the text has a sidecar <text>.json with \"synthetic\": true")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..ioutil import atomic_write_text
    from ..lm.estimate import estimate, synthetic_label

    from ..ioutil import check_outputs_not_inputs
    check_outputs_not_inputs({"--arpa": args.arpa, "--arpa's sidecar": args.arpa + ".json"},
                             {"--text": args.text, "--synthetic-source": args.synthetic_source})
    label = synthetic_label(args.text, args.synthetic_source)
    stats = estimate(args.text, args.order, args.arpa, memory=args.memory,
                     discount_fallback=args.discount_fallback, progress=not args.quiet,
                     header_comment=label["comment"] if label["synthetic"] else None)
    info = {"arpa": args.arpa, **{k: v for k, v in label.items() if k != "comment"}, **stats.__dict__}
    atomic_write_text(args.arpa + ".json", json.dumps(info, indent=1) + "\n")
    print(json.dumps(info))
    return 0
