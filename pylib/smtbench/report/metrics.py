"""Regression metrics (``experiment,key,metric,value,kind``) of each experiment, computed from the rows and
tables the experiment already writes; `smtbench report regress` compares them with the committed baseline.
Each experiment's records are made by ``regression_metrics`` in its report module (report/<experiment>.py), which
imports this module (the record type, :func:`write`, :func:`distinct`, :func:`ratios`), never the other way round;
the records of the non-experiment steps (LM models, estimator parity, tuning) are made here.

``exact``: correctness values that are bit-identical across runs and machines (checksums of scores summed in
a fixed order, digests of deterministic outputs, counts, a perplexity rounded to a fixed number of digits).
``ratio``: speed-ups measured inside one run (formatted to 4 decimals; the tables' value, of the points' best
times); ``ci``: a ratio's 95% interval over the run's paired repeats, as metrics ``<ratio>_ci_low`` /
``<ratio>_ci_high`` beside it, and ``<ratio>_paired``, the estimate the interval is centred on (the geometric mean of
the per-repeat ratios; smtbench.protocol). The regression check and the history compare that estimate with the
intervals, never the best-times value, which can lie outside its own interval. GPU rows never contribute (CI has no
GPU), and no metric key carries a machine-dependent number such as "all cores"."""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..ioutil import atomic_open

COLUMNS = ["experiment", "key", "metric", "value", "kind"]
#: the suffix of a ratio's interval estimate (a ``ci`` record): the geometric mean of its paired per-repeat ratios
PAIRED = "_paired"
Record = tuple[str, str, str, str, str]


def write(records: Iterable[Record], path: str | Path) -> int:
    """Write metric records as CSV (atomically); returns how many."""
    recs = list(records)
    for r in recs:
        if len(r) != 5 or r[4] not in ("exact", "ratio", "ci"):
            raise ValueError(f"bad metric record {r!r}: want (experiment, key, metric, value, exact|ratio|ci)")
    with atomic_open(path) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(recs)
    return len(recs)


def _ratio(x) -> str | None:
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else f"{x:.4f}"


def distinct(values: pd.Series) -> str:
    """The distinct non-null values, sorted and comma-joined: one value when the run's points agree (the
    benchmarks check that they do); a regression shows as more than one."""
    return ",".join(sorted({str(v) for v in values.dropna()}))


def ratios(exp: str, key: str, pairs: dict[str, object], intervals: object = None) -> list[Record]:
    """Ratio records; ``intervals``: a table row (or dict) with ``<metric>_ci_low`` / ``_ci_high`` (and the
    interval's estimate ``<metric>_paired``) for any of them, or a dict metric -> list of per-repeat ratios (their
    interval and estimate are computed here). The ratio record keeps the table's value (best times); the interval
    comes as ``ci`` records with the estimate it is centred on, which is what a check against the interval compares
    (the best-times ratio can lie outside it)."""
    from ..protocol import ratio_ci

    out = []
    for metric, v in pairs.items():
        s = _ratio(v) if v is not None else None
        if s is None:
            continue
        out.append((exp, key, metric, s, "ratio"))
        lo = hi = est = None
        if isinstance(intervals, dict) and isinstance(intervals.get(metric), list):
            c = ratio_ci(intervals[metric])
            lo, hi, est = c.low, c.high, (c.estimate if c.n >= 2 else None)
        elif intervals is not None:
            get = intervals.get if isinstance(intervals, dict) else (lambda k, d=None: getattr(intervals, k, d))
            lo, hi, est = get(f"{metric}_ci_low"), get(f"{metric}_ci_high"), get(metric + PAIRED)
        if lo is None or _ratio(lo) is None:  # no interval: no estimate of one either
            est = None
        for suffix, b in (("_ci_low", lo), ("_ci_high", hi), (PAIRED, est)):
            sb = _ratio(b) if b is not None else None
            if sb is not None:
                out.append((exp, key, metric + suffix, sb, "ci"))
    return out


def lm_models(table: pd.DataFrame) -> list[Record]:
    """`lm models-table` CSV. exact per model: training tokens and the n-gram count of every order (the
    estimator and the seeded sampler of the synthetic models are deterministic)."""
    recs: list[Record] = []
    for r in table.to_dict("records"):
        key = f"model={r['model']}"
        recs.append(("lm_models", key, "training_tokens", str(int(r["training_tokens"])), "exact"))
        for n in range(1, int(r["order"]) + 1):
            recs.append(("lm_models", key, f"ngrams_{n}", str(int(r[f"ngrams_{n}"])), "exact"))
    return recs


PPL_DIGITS = 6  # decimals of the held-out perplexity kept as an exact metric


def lm_estimator_parity(table: pd.DataFrame) -> list[Record]:
    """`lm estimate-parity` CSV. exact per order: our n-gram count, lmplz's, the n-grams only one side has,
    and our model's held-out perplexity (kenlm module) to PPL_DIGITS decimals. lmplz's perplexity is left out:
    lmplz is compiled on each machine from the sdist, so its last digits are not ours to pin."""
    recs: list[Record] = []
    for r in table.to_dict("records"):
        key = f"order={int(r['order'])}"
        for m in ("ngrams_ours", "ngrams_lmplz", "ngrams_only_one_side"):
            recs.append(("lm_estimator_parity", key, m, str(int(r[m])), "exact"))
        recs.append(("lm_estimator_parity", key, "ppl_ours", f"{float(r['ppl_ours']):.{PPL_DIGITS}f}", "exact"))
    return recs


def tune(evals: pd.DataFrame, iters: pd.DataFrame, peers: pd.DataFrame | None) -> list[Record]:
    """Weight tuning. exact: dev/test BLEU (2 decimals) of each weights label (the decoders and the optimisers are
    deterministic given the seed), the iteration count and the iteration whose weights were returned, and our
    optimisers' n-best BLEU on the peers' lists (2 decimals). Moses' side is not a metric (another program)."""
    out: list[Record] = []
    for _, e in evals.iterrows():
        out.append(("tune", f"{e['label']}-{e['split']}", "bleu", f"{float(e['bleu']):.2f}", "exact"))
    for opt, g in (iters.groupby("optimizer") if len(iters) else []):
        out.append(("tune", opt, "iterations", str(int(g["run"].max())), "exact"))
        out.append(("tune", opt, "best_dev_run", str(int(g.loc[g["dev_bleu"].idxmax(), "run"])), "exact"))
    if peers is not None and len(peers) and "nbest_bleu" in peers:
        for _, r in peers[(peers.side == "ours") & peers.nbest_bleu.notna()].iterrows():
            out.append(("tune", f"peers-{r['optimizer']}", "nbest_bleu", f"{float(r['nbest_bleu']):.2f}", "exact"))
    return out
