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
    register_parity(groups)
    register_models_table(groups)


def run(args: argparse.Namespace) -> int:
    import json

    from ..ioutil import atomic_write_text
    from ..lm.estimate import estimate, synthetic_label

    label = synthetic_label(args.text, args.synthetic_source)
    stats = estimate(args.text, args.order, args.arpa, memory=args.memory,
                     discount_fallback=args.discount_fallback, progress=not args.quiet,
                     header_comment=label["comment"] if label["synthetic"] else None)
    info = {"arpa": args.arpa, **{k: v for k, v in label.items() if k != "comment"}, **stats.__dict__}
    atomic_write_text(args.arpa + ".json", json.dumps(info, indent=1) + "\n")
    print(json.dumps(info))
    return 0


def register_parity(groups: dict[str, argparse._SubParsersAction]) -> None:
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
    p.set_defaults(func=run_parity)


def run_parity(args: argparse.Namespace) -> int:
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


def register_models_table(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["lm"].add_parser("models-table", help="table of estimated models from their .arpa.gz.json sidecars")
    p.add_argument("--meta", nargs="+", required=True, help="<model>.arpa[.gz].json files from `lm estimate`")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.set_defaults(func=run_models_table)


def run_models_table(args: argparse.Namespace) -> int:
    import json
    import os
    from pathlib import Path

    import pandas as pd

    from ..ioutil import atomic_open

    rows = []
    for m in args.meta:
        info = json.loads(Path(m).read_text())
        arpa = info["arpa"]
        name = Path(arpa).name
        for suf in (".gz", ".arpa"):
            name = name[: -len(suf)] if name.endswith(suf) else name
        counts = info["counts"]
        rows.append({
            "model": name, "synthetic": bool(info.get("synthetic")),
            "synthetic_source": info.get("synthetic_source") or "", "order": info["order"],
            "training_tokens": info["tokens"], "ngrams": sum(counts),
            **{f"ngrams_{n}": c for n, c in enumerate(counts, 1)},
            "arpa_bytes": os.path.getsize(arpa) if os.path.exists(arpa) else None,
            "discount_fallback_orders": " ".join(map(str, info.get("discount_fallback_orders", []))),
            "estimate_seconds": round(info["seconds"], 2), "estimate_c_peak_bytes": info["c_peak_bytes"],
        })
    df = pd.DataFrame(rows).sort_values(["synthetic", "ngrams"])
    first = ["model", "synthetic", "synthetic_source", "order", "training_tokens", "ngrams"]
    per_order = sorted((c for c in df.columns if c.startswith("ngrams_")), key=lambda c: int(c.split("_")[1]))
    df = df[first + per_order + [c for c in df.columns if c not in first and c not in per_order]]
    for c in per_order:
        df[c] = df[c].astype("Int64")
    with atomic_open(args.csv) as fh:
        df.to_csv(fh, index=False)
    with atomic_open(args.md) as fh:
        fh.write("# n-gram language models\n\nInterpolated modified Kneser-Ney (`smtbench lm estimate`, lmplz's "
                 "rules). Rows with synthetic = True are SYNTHETIC: estimated on text sampled from the source "
                 "model (`smtbench lm sample`), not on real text.\n\n")
        fh.write(df.astype(object).where(df.notna(), "").astype(str)
                 .to_markdown(index=False, disable_numparse=True) + "\n")
    return 0
