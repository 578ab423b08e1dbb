"""Weight tuning (`smtbench tune`, `tune-eval`, `tune-peers` rows): dev/test BLEU of the default and the tuned
weights, the iterations of each tuning run, and our optimisers beside Moses' mert/kbmira on the same n-best lists."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import pandas as pd

BLEU_NOTES = """
BLEU: sacrebleu --tokenize none on the tokenized, lowercased text, one reference. `default` = train-model.perl's
untuned weights; `mert` / `mira` = the ini `smtbench tune` wrote (tuned on the dev books, evaluated on the dev and
the test books with the same decoder settings). `iterations`: decode + optimise rounds of the tuning run;
`best_dev_run`: the iteration whose weights (those it decoded with) had the best dev BLEU - the weights written
(--return-best-dev); `converged`: whether the run stopped because no weight moved by 1e-5 (else: --max-iterations).
"""

ITER_NOTES = """
One row per iteration: `dev_bleu` is sacrebleu of the 1-best decoded with the weights the iteration started from;
`pool` the distinct hypotheses of all n-best lists so far; `nbest_before` / `nbest_after` the optimiser's n-best BLEU
(Moses' BleuScorer statistics, x100) at its start and end point. `decode_s` / `optimize_s`: wall seconds on the
shared 2-core machine (load average 8-12 during the run): progress information, not measurements.
"""

PEER_NOTES = """
Both sides see the same n-best lists (every iteration of the tuning run merged) and the same sufficient statistics:
Moses' `extractor` wrote them and ours were checked equal to them. `nbest_bleu`: n-best BLEU of the side's weights,
computed on the extractor's files (x100); `own_bleu`: what the program itself reports (kbmira: its best epoch's);
`cosine`: between our and Moses' weight vectors (L1-normalised). The acceptance bound is |ours - Moses| <= 0.1 BLEU.
MERT: random restarts differ (Moses' random stream is not reproduced); without restarts both reach the same point
(tests/test_tune_moses.py). kbmira optimises on fewer hypotheses than it is given: its dedup set compares an item with
itself (mert/FeatureDataIterator.cpp, `item1.dense==item1.dense`), so every hypothesis hashed into an occupied bucket
is dropped as a duplicate; its own BLEU (`own_bleu`, on that subset) then differs from its weights' BLEU on the full
lists (`nbest_bleu`). `kbmira-dedupfix`: the same source with that one line fixed (`item1 == item2`;
tools/build_moses.sh builds it beside kbmira): where it sees every hypothesis, its `own_bleu` equals its
`nbest_bleu`, and `ours_minus_moses` on its row is ours against Moses' MIRA without the bug.
"""


def read_jsonl(paths: Iterable[str | Path]) -> pd.DataFrame:
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    return pd.DataFrame(rows)


def iterations(rows: pd.DataFrame) -> pd.DataFrame:
    """`smtbench tune --summary` rows -> one row per optimiser and iteration."""
    if rows.empty:
        return rows
    return pd.DataFrame({"optimizer": rows["optimizer"], "run": rows["run"], "dev_bleu": rows["dev_bleu"],
                         "nbest_lines": rows["nbest_lines"], "pool": rows["pool_size"],
                         "nbest_before": 100 * rows["nbest_bleu_before"], "nbest_after": 100 * rows["nbest_bleu_after"],
                         "converged": rows["converged"], "decode_s": rows["decode_seconds"],
                         "optimize_s": rows["optimize_seconds"]})


def bleu_table(evals: pd.DataFrame, iters: pd.DataFrame) -> pd.DataFrame:
    """One row per weights label: dev and test BLEU, the gain over `default`, the iteration count."""
    e = evals.assign(split=evals["split"] if "split" in evals else "")
    wide = e.pivot_table(index="label", columns="split", values="bleu", aggfunc="first")
    out = []
    for label in wide.index:
        row = {"weights": label}
        for split in wide.columns:
            row[f"{split}_bleu"] = wide.loc[label, split]
            if "default" in wide.index and label != "default":
                row[f"{split}_gain"] = wide.loc[label, split] - wide.loc["default", split]
        it = iters[iters.optimizer == label] if len(iters) else iters
        row["iterations"] = int(it["run"].max()) if len(it) else 0
        row["converged"] = bool(it["converged"].iloc[-1]) if len(it) else None
        row["best_dev_run"] = int(it.loc[it["dev_bleu"].idxmax(), "run"]) if len(it) else None
        out.append(row)
    df = pd.DataFrame(out)
    order = {"default": 0, "mert": 1, "mira": 2}
    return df.sort_values("weights", key=lambda s: s.map(lambda x: order.get(x, 9))).reset_index(drop=True)


def peers_table(peers: pd.DataFrame) -> pd.DataFrame:
    cols = ["optimizer", "program", "nbest_bleu", "own_bleu", "start_bleu", "cosine", "lists", "sentences",
            "hypotheses"]
    df = peers[[c for c in cols if c in peers.columns]].copy()
    if "nbest_bleu" not in peers:  # Moses not built: no comparison
        df["ours_minus_moses"] = float("nan")
        return df
    # ours minus each Moses program on the same lists (the `ours` row: minus the first, the program as shipped)
    ours = peers[peers.side == "ours"].groupby("optimizer")["nbest_bleu"].first()
    first = peers[peers.side == "moses"].groupby("optimizer")["nbest_bleu"].first()
    theirs = peers["nbest_bleu"].where(peers.side == "moses", peers["optimizer"].map(first))
    df["ours_minus_moses"] = peers["optimizer"].map(ours) - theirs
    return df
