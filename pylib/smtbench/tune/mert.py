"""Minimum error rate training (Och 2003) as Moses' ``mert`` does it (``mert/Optimizer.cpp``, ``mert.cpp``).

* The line search is exact: along ``w + x d`` every hypothesis' model score is a line in ``x``; each sentence's
  1-best changes only where its upper envelope changes hands (csrc/tune/mert.c finds those points), so corpus BLEU is
  piecewise constant with breakpoints at the union of them. BLEU of every interval is summed from sufficient
  statistics (vectorised); the best interval wins (the first of equals), and x is its midpoint - or, as Moses,
  1000 left of the first breakpoint for the leftmost interval and 0.1 right of the last for the rightmost;
  ``|x| < 0.00015`` counts as the origin.
* The search from one starting point is Moses' default optimiser ("powell", SimpleOptimizer): each round
  line-searches every coordinate direction from the same point and moves to the best point any of them found;
  rounds repeat while BLEU rises by more than 1e-4.
* Starting points: the given ones (the previous weights), then ``restarts`` random points uniform in
  [min, max] per weight (mert-moses.pl: [0, 1], 20 restarts); the best end point is L1-normalised.

Deterministic given the ``numpy.random.Generator`` passed in (Moses' own random stream is not reproduced).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..native import check, ffi, lib
from .bleu import bleu, bleu_many
from .pool import NbestPool

EPS = 1e-4           # SimpleOptimizer's kEPS
ORIGIN_SNAP = 0.00015


def one_bests(feats: np.ndarray, offsets: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Index (into the whole array) of each sentence's highest-scoring hypothesis under ``w``; the first of equals."""
    scores = feats @ w
    starts = offsets[:-1].astype(np.int64)
    sizes = np.diff(offsets).astype(np.int64)
    best = np.maximum.reduceat(scores, starts)
    hit = np.flatnonzero(scores == np.repeat(best, sizes))
    group = np.repeat(np.arange(len(sizes)), sizes)[hit]
    first = np.ones(len(hit), dtype=bool)
    first[1:] = group[1:] != group[:-1]
    return hit[first]


def score_at(pool: NbestPool, w: np.ndarray) -> float:
    feats, stats, offsets = pool.arrays()
    return bleu(stats[one_bests(feats, offsets, w)].sum(axis=0))


def envelopes(offsets: np.ndarray, slope: np.ndarray, intercept: np.ndarray, order: np.ndarray | None = None):
    """(x, idx, counts) of csrc/tune/mert.c: each sentence's envelope segments at its own offsets; ``order``: the lines
    sorted by slope within each sentence (``slope_order``), or None to sort here."""
    n = len(slope)
    slope = np.ascontiguousarray(slope, dtype=np.float64)
    intercept = np.ascontiguousarray(intercept, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.uint64)
    out_x = np.empty(n, dtype=np.float64)
    out_idx = np.empty(n, dtype=np.uint32)
    counts = np.empty(len(offsets) - 1, dtype=np.uint32)
    check(lib.sb_mert_envelopes(len(counts), ffi.from_buffer("uint64_t[]", offsets),
                                ffi.from_buffer("double[]", slope), ffi.from_buffer("double[]", intercept),
                                ffi.NULL if order is None else ffi.from_buffer("uint32_t[]", order),
                                ffi.from_buffer("double[]", out_x), ffi.from_buffer("uint32_t[]", out_idx),
                                ffi.from_buffer("uint32_t[]", counts)), "MERT envelopes")
    return out_x, out_idx, counts


def slope_order(offsets: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """Every sentence's hypotheses (global indices) by ascending slope, at the sentence's offsets."""
    group = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets).astype(np.int64))
    return np.lexsort((slope, group)).astype(np.uint32)


def line_search_values(feats: np.ndarray, stats: np.ndarray, offsets: np.ndarray, origin_scores: np.ndarray,
                       slope: np.ndarray, order: np.ndarray | None = None) -> tuple[float, float]:
    """The exact line search given every hypothesis' score at the origin and its slope: (best x, best BLEU)."""
    n, groups = len(slope), len(offsets) - 1
    slope = np.ascontiguousarray(slope, dtype=np.float64)
    origin_scores = np.ascontiguousarray(origin_scores, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.uint64)
    first = np.empty(groups, dtype=np.uint32)
    ev_x = np.empty(n, dtype=np.float64)
    ev_new = np.empty(n, dtype=np.uint32)
    ev_old = np.empty(n, dtype=np.uint32)
    count = ffi.new("uint64_t *")
    check(lib.sb_mert_events(groups, ffi.from_buffer("uint64_t[]", offsets), ffi.from_buffer("double[]", slope),
                             ffi.from_buffer("double[]", origin_scores),
                             ffi.NULL if order is None else ffi.from_buffer("uint32_t[]", order),
                             ffi.from_buffer("uint32_t[]", first), ffi.from_buffer("double[]", ev_x),
                             ffi.from_buffer("uint32_t[]", ev_new), ffi.from_buffer("uint32_t[]", ev_old), count),
          "MERT line search")
    m = int(count[0])
    base = stats[first].sum(axis=0)
    if m == 0:
        return 0.0, bleu(base)
    ev_x = ev_x[:m]
    order_x = np.argsort(ev_x, kind="stable")
    ev_x = ev_x[order_x]
    delta = stats[ev_new[:m][order_x]] - stats[ev_old[:m][order_x]]
    cum = base + np.cumsum(delta, axis=0)
    last = np.ones(m, dtype=bool)
    last[:-1] = ev_x[1:] != ev_x[:-1]
    ux = ev_x[last]
    scores = np.concatenate([[bleu(base)], bleu_many(cum[last])])
    k = int(np.argmax(scores))  # the first of equals, as Moses' strict '>'
    if k == 0:
        x = float(ux[0]) - 1000.0
    elif k == len(ux):
        x = float(ux[-1]) + 0.1
    else:
        x = 0.5 * (float(ux[k - 1]) + float(ux[k]))
    if abs(x) < ORIGIN_SNAP:
        x = 0.0
    return x, float(scores[k])


def line_search(pool: NbestPool, origin: np.ndarray, direction: np.ndarray) -> tuple[float, float]:
    """Best BLEU along ``origin + x * direction``: (x, BLEU)."""
    feats, stats, offsets = pool.arrays()
    return line_search_values(feats, stats, offsets, feats @ origin, feats @ direction)


def coordinate_orders(pool: NbestPool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each feature's column (contiguous) and its slope order, computed once per pool."""
    cache = getattr(pool, "_mert_orders", None)
    if cache is None or cache[0] is not pool.arrays()[0]:
        feats, _, offsets = pool.arrays()
        columns = [np.ascontiguousarray(feats[:, d]) for d in range(pool.dim)]
        cache = (feats, columns, [slope_order(offsets, c) for c in columns])
        pool._mert_orders = cache
    return cache[1], cache[2]


def optimise_from(pool: NbestPool, start: np.ndarray, rng: np.random.Generator | None = None,
                  random_directions: int = 0) -> tuple[np.ndarray, float, int]:
    """Moses' SimpleOptimizer from one point: (end point, its BLEU, rounds)."""
    feats, stats, offsets = pool.arrays()
    columns, orders = coordinate_orders(pool)
    p = np.array(start, dtype=np.float64)
    best_score = score_at(pool, p)
    best = p.copy()
    rounds = 0
    while True:
        rounds += 1
        prev = best_score
        origin_scores = feats @ p
        for d in range(pool.dim + random_directions):
            if d < pool.dim:
                direction = np.zeros(pool.dim)
                direction[d] = 1.0
                slope, order = columns[d], orders[d]
            else:
                direction = rng.uniform(0.0, 1.0, pool.dim) if rng is not None else np.ones(pool.dim)
                slope, order = feats @ direction, None
            x, s = line_search_values(feats, stats, offsets, origin_scores, slope, order)
            if s > best_score:
                best_score = s
                best = p + x * direction
        p = best.copy()
        if best_score - prev <= EPS:
            return p, best_score, rounds


@dataclass
class MertResult:
    weights: np.ndarray          # L1-normalised, tuneable features in layout order
    bleu: float                  # n-best BLEU at the optimum (on the pool it was optimised on)
    start_bleu: float            # n-best BLEU of the first starting point
    starts: int
    best_start: int              # which starting point won (0 = the first given point)
    scores: list[float] = field(default_factory=list)


def mert(pool: NbestPool, starts: Sequence[Sequence[float]], rng: np.random.Generator, restarts: int = 20,
         lower: Sequence[float] | float = 0.0, upper: Sequence[float] | float = 1.0,
         random_directions: int = 0) -> MertResult:
    """Moses' ``mert -n restarts``: optimise from every given start and ``restarts`` random ones; best wins."""
    if not starts:
        raise ValueError("MERT needs at least one starting point")
    lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (pool.dim,))
    hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), (pool.dim,))
    points = [np.asarray(s, dtype=np.float64) for s in starts]
    for s in points:
        if s.shape != (pool.dim,):
            raise ValueError(f"a starting point has {s.size} weights, the n-best lists {pool.dim} features")
    points += [rng.uniform(lo, hi) for _ in range(restarts)]
    start_bleu = score_at(pool, points[0])
    best_w, best_s, best_i = None, -1.0, 0
    scores = []
    for i, p in enumerate(points):
        w, s, _ = optimise_from(pool, p, rng, random_directions)
        scores.append(s)
        if s > best_s:
            best_w, best_s, best_i = w, s, i
    norm = np.abs(best_w).sum()
    if norm > 0:
        best_w = best_w / norm
    return MertResult(best_w, best_s, start_bleu, len(points), best_i, scores)
