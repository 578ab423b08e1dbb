"""k-best batch MIRA (Cherry & Foster 2012) as Moses' ``kbmira`` does it (``mert/kbmira.cpp``,
``HopeFearDecoder.cpp``, ``MiraWeightVector.cpp``), on the n-best lists of every iteration so far.

Per epoch (60 by default) the sentences are visited in a fresh random order. For each: hope = argmax of model
score + background BLEU, fear = argmax of model score - background BLEU, where the background BLEU of a hypothesis
is BLEU of (its statistics + the background corpus) times that sum's reference length; when hope and fear differ
and hope's BLEU is higher, the loss is (BLEU difference) - w.(f_hope - f_fear), and if positive
w += min(C, loss / |f_hope - f_fear|^2) (f_hope - f_fear); the background decays (0.999) and takes the hope's
statistics. The background starts at 1 for every statistic. The averaged weights - (initial weights + the weights
after each update) / number of updates, kbmira's bookkeeping - are evaluated (corpus BLEU of their 1-bests) after
each epoch, and the best epoch's are returned (mert-moses.pl L1-normalises them).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bleu import background_bleu, bleu
from .mert import one_bests
from .pool import NbestPool


@dataclass
class MiraResult:
    weights: np.ndarray     # the best epoch's averaged weights, L1-normalised
    bleu: float             # its n-best BLEU
    start_bleu: float
    best_epoch: int         # 1-based
    updates: int


def kbmira(pool: NbestPool, init: np.ndarray, rng: np.random.Generator, c: float = 0.01, decay: float = 0.999,
           epochs: int = 60, shuffle: bool = True) -> MiraResult:
    if not c > 0 or not 0 < decay <= 1 or epochs < 1:
        raise ValueError(f"kbmira: C={c}, decay={decay}, epochs={epochs} (need C > 0, 0 < decay <= 1, epochs >= 1)")
    feats, stats, offsets = pool.arrays()
    init = np.asarray(init, dtype=np.float64)
    if init.shape != (pool.dim,):
        raise ValueError(f"kbmira: {init.size} initial weights, the n-best lists have {pool.dim} features")
    w = init.copy()
    totals = init.copy()       # init + sum of the weights after every update (MiraWeightVector's m_totals)
    updates = 0
    bg = np.ones(stats.shape[1])
    starts = offsets[:-1].astype(np.int64)
    ends = offsets[1:].astype(np.int64)
    statsf = stats.astype(np.float64)

    def avg() -> np.ndarray:
        return w.copy() if updates == 0 else totals / updates

    def evaluate(v: np.ndarray) -> float:
        return bleu(stats[one_bests(feats, offsets, v)].sum(axis=0))

    start_bleu = evaluate(avg())
    best_bleu, best_w, best_epoch = 0.0, avg(), 0
    order = np.arange(pool.sentences)
    for epoch in range(1, epochs + 1):
        if shuffle:
            order = rng.permutation(pool.sentences)
        for s in order:
            lo, hi = starts[s], ends[s]
            f = feats[lo:hi]
            score = f @ w
            b = background_bleu(statsf[lo:hi], bg)
            hope = int(np.argmax(score + b))
            fear = int(np.argmax(score - b))
            if hope == fear or not b[hope] > b[fear]:
                continue
            diff = f[hope] - f[fear]
            loss = (b[hope] - b[fear]) - float(diff @ w)
            if loss > 0:
                sq = float(diff @ diff)
                eta = min(c, loss / sq) if sq > 0 else c
                w = w + eta * diff
                updates += 1
                totals += w
            bg = bg * decay + statsf[lo + hope]
        a = avg()
        s_bleu = evaluate(a)
        if s_bleu > best_bleu:
            best_bleu, best_w, best_epoch = s_bleu, a, epoch
    norm = np.abs(best_w).sum()
    return MiraResult(best_w / norm if norm > 0 else best_w, best_bleu, start_bleu, best_epoch, updates)
