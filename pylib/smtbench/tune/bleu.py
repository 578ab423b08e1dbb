"""BLEU as Moses' tuning programs compute it (``mert/BleuScorer.cpp``): per-hypothesis sufficient statistics, a
corpus score from their sum, and kbmira's sentence-level BLEU against a background corpus.

Statistics (``STATS`` = 9 numbers, the columns of Moses' ``extractor`` score files): matched and total n-grams for
n = 1..4 (``c1 t1 c2 t2 c3 t3 c4 t4``), then the reference length. Tokens are the blank-separated words (Moses splits
on ``' '`` only, no case folding by default); a hypothesis n-gram count is clipped by its largest count in any one
reference; the reference length is the closest one to the hypothesis' length, the shorter of two equally close
(Moses' default ``reflen:closest``; ``shortest`` and ``average`` as its options).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

ORDER = 4
STATS = 2 * ORDER + 1
REFLEN = ("closest", "shortest", "average")


def tokens(line: str) -> list[str]:
    """Moses' tokenisation for BLEU: split at blanks (only ``' '``), empty tokens dropped."""
    return [t for t in line.split(" ") if t]


def ngrams(words: Sequence[str], order: int = ORDER) -> Counter:
    c: Counter = Counter()
    n = len(words)
    for k in range(1, order + 1):
        for i in range(n - k + 1):
            c[tuple(words[i:i + k])] += 1
    return c


class Reference:
    """One sentence's references: the largest count of every n-gram in any one of them, and their lengths."""

    __slots__ = ("counts", "lengths")

    def __init__(self, lines: Sequence[str]):
        self.counts: dict[tuple[str, ...], int] = {}
        self.lengths: list[int] = []
        for line in lines:
            words = tokens(line)
            self.lengths.append(len(words))
            for g, n in ngrams(words).items():
                if n > self.counts.get(g, 0):
                    self.counts[g] = n

    def length(self, hyp_len: int, reflen: str = "closest") -> int:
        if reflen == "shortest":
            return min(self.lengths)
        if reflen == "average":
            return int(float(sum(self.lengths)) / len(self.lengths))
        best = self.lengths[0]
        for r in self.lengths[1:]:  # Reference::CalcClosest: closest, the shorter on a tie
            if abs(r - hyp_len) < abs(best - hyp_len) or (abs(r - hyp_len) == abs(best - hyp_len) and r < best):
                best = r
        return best

    def stats(self, hyp: str, reflen: str = "closest") -> list[int]:
        words = tokens(hyp)
        out = [0] * STATS
        for g, n in ngrams(words).items():
            k = len(g)
            out[2 * k - 2] += min(n, self.counts.get(g, 0))
            out[2 * k - 1] += n
        out[2 * ORDER] = self.length(len(words), reflen)
        return out


def load_references(paths: Sequence[str]) -> list[Reference]:
    """Sentence i's references are line i of every file (Moses' ``-r a,b``); all files need the same length."""
    from ..ioutil import open_text

    columns: list[list[str]] = []
    for p in paths:
        with open_text(p) as fh:
            columns.append([line.rstrip("\n") for line in fh])
    if not columns or not columns[0]:
        raise ValueError(f"{paths[0] if paths else '--reference'}: no reference sentences")
    for p, col in zip(paths, columns):
        if len(col) != len(columns[0]):
            raise ValueError(f"{p}: {len(col)} lines, but {paths[0]} has {len(columns[0])}")
    return [Reference(lines) for lines in zip(*columns)]


def bleu(stats: Sequence[float] | np.ndarray) -> float:
    """Corpus BLEU of summed statistics (BleuScorer::calculateScore): 0 when any n-gram order has no match;
    brevity penalty exp(1 - r/c) when the hypothesis is shorter."""
    s = np.asarray(stats, dtype=np.float64)
    if s.shape[-1] != STATS:
        raise ValueError(f"BLEU statistics need {STATS} values, got {s.shape[-1]}")
    if np.any(s[0:2 * ORDER:2] <= 0):
        return 0.0
    logbleu = float(np.sum(np.log(s[0:2 * ORDER:2]) - np.log(s[1:2 * ORDER:2]))) / ORDER
    brevity = 1.0 - s[2 * ORDER] / s[1]
    if brevity < 0.0:
        logbleu += brevity
    return math.exp(logbleu)


def bleu_many(stats: np.ndarray) -> np.ndarray:
    """``bleu`` of every row of an (n, 9) array, vectorised."""
    s = np.asarray(stats, dtype=np.float64)
    matched = s[:, 0:2 * ORDER:2]
    total = s[:, 1:2 * ORDER:2]
    ok = np.all(matched > 0, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        logbleu = np.sum(np.log(np.where(ok[:, None], matched, 1.0)) - np.log(np.where(ok[:, None], total, 1.0)),
                         axis=1) / ORDER
        brevity = 1.0 - s[:, 2 * ORDER] / np.where(ok, s[:, 1], 1.0)
    logbleu = logbleu + np.minimum(brevity, 0.0)
    return np.where(ok, np.exp(logbleu), 0.0)


def background_bleu(stats: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """kbmira's sentence BLEU of each row of ``stats`` with the background ``bg`` added
    (sentenceLevelBackgroundBleu): BLEU of the sum times its reference length (Chiang et al. 2008)."""
    s = np.asarray(stats, dtype=np.float64) + bg
    with np.errstate(divide="ignore"):
        logbleu = np.sum(np.log(s[:, 0:2 * ORDER:2]) - np.log(s[:, 1:2 * ORDER:2]), axis=1) / ORDER
    brevity = 1.0 - s[:, 2 * ORDER] / s[:, 1]
    logbleu = logbleu + np.minimum(brevity, 0.0)
    return np.exp(logbleu) * s[:, 2 * ORDER]
