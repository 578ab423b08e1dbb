"""`smtbench lm models-table`: the table of estimated models, from their .arpa.gz.json sidecars."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["lm"].add_parser("models-table", help="table of estimated models from their .arpa.gz.json sidecars")
    p.add_argument("--meta", nargs="+", required=True, help="<model>.arpa[.gz].json files from `lm estimate`")
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
