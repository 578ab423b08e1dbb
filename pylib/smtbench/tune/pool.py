"""The tuning data: every distinct hypothesis of every n-best list seen so far, per dev sentence, with its tuneable
feature values and BLEU sufficient statistics (what Moses' ``extractor`` writes and ``mert``/``kbmira`` load from
all iterations' feature and score files, duplicates removed)."""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..decode.nbest import parse_features
from .bleu import STATS, Reference


class TuneDataError(ValueError):
    """An n-best list that does not fit the tuning run; the message names file:line."""


class NbestPool:
    """``NbestPool(references, layout)``: ``layout`` = [(feature name, number of values)] of the tuneable features
    in weight order; other features an n-best line carries (UnknownWordPenalty0, untuneable ones) are ignored, as
    Moses leaves them out of its n-best lists. Hypotheses are distinct per sentence by (features, statistics)."""

    def __init__(self, references: Sequence[Reference], layout: Sequence[tuple[str, int]], reflen: str = "closest"):
        self.refs = list(references)
        self.layout = [(str(n), int(k)) for n, k in layout]
        self.dim = sum(k for _, k in self.layout)
        self.reflen = reflen
        self._keys: list[set] = [set() for _ in self.refs]
        self._feats: list[list[tuple[float, ...]]] = [[] for _ in self.refs]
        self._stats: list[list[tuple[int, ...]]] = [[] for _ in self.refs]
        self._texts: list[list[str]] = [[] for _ in self.refs]
        self._stat_cache: dict[tuple[int, str], tuple[int, ...]] = {}
        self._arrays = None

    @property
    def sentences(self) -> int:
        return len(self.refs)

    def __len__(self) -> int:
        return sum(len(f) for f in self._feats)

    def add(self, sid: int, text: str, features: Sequence[float]) -> bool:
        """Add one hypothesis; False when the sentence already has it."""
        key_text = (sid, text)
        st = self._stat_cache.get(key_text)
        if st is None:
            st = tuple(self.refs[sid].stats(text, self.reflen))
            self._stat_cache[key_text] = st
        fv = tuple(float(v) for v in features)
        key = (fv, st)
        if key in self._keys[sid]:
            return False
        self._keys[sid].add(key)
        self._feats[sid].append(fv)
        self._stats[sid].append(st)
        self._texts[sid].append(text)
        self._arrays = None
        return True

    def add_nbest(self, path: str | os.PathLike[str]) -> tuple[int, int]:
        """Read a Moses n-best list (plain/.gz/.xz); returns (lines read, new distinct hypotheses)."""
        from ..ioutil import open_text

        names = [n for n, _ in self.layout]
        want = dict(self.layout)
        lines = new = 0
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                where = f"{path}:{lineno}"
                parts = line.rstrip("\n").split("|||")
                if len(parts) < 4:
                    raise TuneDataError(f"{where}: expected 'id ||| text ||| features ||| total'")
                try:
                    sid = int(parts[0])
                    feats = parse_features(parts[2])
                except ValueError as exc:
                    raise TuneDataError(f"{where}: {exc}") from None
                if not 0 <= sid < len(self.refs):
                    raise TuneDataError(f"{where}: sentence id {sid}, but the reference has {len(self.refs)} lines")
                values: list[float] = []
                for n in names:
                    v = feats.get(n)
                    if v is None:
                        raise TuneDataError(f"{where}: no values for feature {n} (have {', '.join(feats)})")
                    if len(v) != want[n]:
                        raise TuneDataError(f"{where}: {n} has {len(v)} values, expected {want[n]}")
                    values.extend(v)
                if not all(np.isfinite(values)):
                    raise TuneDataError(f"{where}: feature values must be finite")
                lines += 1
                new += self.add(sid, parts[1].strip(), values)
        return lines, new

    def check_complete(self, what: str) -> None:
        missing = [i for i, f in enumerate(self._feats) if not f]
        if missing:
            raise TuneDataError(f"{what}: no hypothesis for {len(missing)} of {len(self.refs)} sentences "
                                f"(first: line {missing[0] + 1})")

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(features (N, dim) float64, statistics (N, 9) int64, offsets (sentences + 1) uint64), sentence-major."""
        if self._arrays is None:
            sizes = np.array([len(f) for f in self._feats], dtype=np.uint64)
            offsets = np.zeros(len(sizes) + 1, dtype=np.uint64)
            np.cumsum(sizes, out=offsets[1:])
            n = int(offsets[-1])
            feats = np.array([v for f in self._feats for v in f], dtype=np.float64).reshape(n, self.dim)
            stats = np.array([v for s in self._stats for v in s], dtype=np.int64).reshape(n, STATS)
            self._arrays = (feats, stats, offsets)
        return self._arrays

    def text(self, sid: int, j: int) -> str:
        return self._texts[sid][j]
