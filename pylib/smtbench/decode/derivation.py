"""An independent derivation scorer: the model score of a given segmentation, written apart from the C search.

Plain, slow Python over the text tables (only the pairs of the given sentences are kept) and the ``kenlm``
Python module for the LM, so that rescoring a decoder's output checks the C model (csrc/pb/) and the
search with code that shares nothing with them but the reading of the Moses fact sheet.

A segmentation is a list of (source start, source end, target words) in target order, 0-based inclusive spans.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..ioutil import atomic_open, open_binary, open_text
from ..ioutil import words as split_words, join_words
from .ini import MosesConfig, load_ini

LN10 = math.log(10.0)
_SEG = re.compile(r"\|(\d+)-(\d+)(?:,[^|]*)?\|")

Segment = tuple[int, int, list[str]]


class DerivationError(ValueError):
    """A segmentation that is not a derivation of its source sentence under the model."""


def _ln(p: float) -> float:
    return max(math.log(p), -100.0) if p > 0 else -100.0


def plain_arpa(path: Path, cache: Path | None = None) -> Path:
    """A path kenlm can read: .xz and .gz ARPA files (which the kenlm wheel cannot open) are decompressed once
    into a cache keyed by the content hash of the compressed file."""
    if not str(path).endswith((".xz", ".gz")):
        return path
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    from ..cache import cache_root
    root = cache or cache_root()
    target = root / "arpa" / f"{h.hexdigest()[:32]}.arpa"
    if not target.exists():
        import shutil

        with open_binary(path) as src, atomic_open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
    return target


def parse_segmentation(line: str) -> list[Segment]:
    """`words |i-j| words |k-l| ...` (Moses -t) or the enriched `|i-j,FEATURES |` form."""
    segs: list[Segment] = []
    pos = 0
    for m in _SEG.finditer(line):
        words = split_words(line[pos:m.start()])
        segs.append((int(m.group(1)), int(m.group(2)), words))
        pos = m.end()
    if line[pos:].strip():
        raise DerivationError(f"text after the last |i-j| marker: {line[pos:].strip()!r}")
    return segs


@dataclass
class Scored:
    features: dict[str, list[float]]  # ini feature name -> values (UnknownWordPenalty0 included)
    total: float


class DerivationScorer:
    """Score segmentations of ``sentences`` (the source lines) under the moses.ini's model."""

    def __init__(self, config: MosesConfig | str | os.PathLike[str], sentences: Iterable[str]):
        import kenlm

        self.config = config if isinstance(config, MosesConfig) else load_ini(config)
        self.sentences = [split_words(s) for s in sentences]
        wanted: set[str] = set()
        for words in self.sentences:
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + 20) + 1):
                    wanted.add(" ".join(words[i:j]))
        self.tm: dict[tuple[str, str], list[float]] = {}
        self.ro: dict[tuple[str, str], list[float]] = {}
        self.src_in_table: set[str] = set()
        for f in self.config.features:
            if f.kind == "PhraseDictionaryMemory":
                self._read(f.path, wanted, self.tm, 4)
            elif f.kind == "LexicalReordering":
                self._read(f.path, wanted, self.ro, 6)
        self.src_in_table = {s for s, _ in self.tm}
        lm = self.config.feature("KENLM")
        self.lm = kenlm.Model(str(plain_arpa(lm.path)))

    @staticmethod
    def _read(path: Path, wanted: set[str], into: dict, n: int) -> None:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                parts = line.rstrip("\n").split(" ||| ")
                if len(parts) < 3:
                    raise DerivationError(f"{path}:{lineno}: expected 'src ||| tgt ||| scores'")
                src = join_words(parts[0])
                if src not in wanted:
                    continue
                vals = [_ln(float(x)) for x in parts[2].split()]
                if len(vals) != n:
                    raise DerivationError(f"{path}:{lineno}: expected {n} scores, found {len(vals)}")
                into[(src, join_words(parts[1]))] = vals

    def score(self, sid: int, segs: Sequence[Segment]) -> Scored:
        src = self.sentences[sid]
        covered = [False] * len(src)
        unk = wp = pp = dist = 0.0
        tm = [0.0] * 4
        ro = [0.0] * 6
        target: list[str] = []
        prev_span: tuple[int, int] | None = None
        prev_ro: list[float] | None = None
        for start, end, words in segs:
            if not 0 <= start <= end < len(src):
                raise DerivationError(f"sentence {sid}: span {start}-{end} outside 0-{len(src) - 1}")
            for i in range(start, end + 1):
                if covered[i]:
                    raise DerivationError(f"sentence {sid}: word {i} covered twice")
                covered[i] = True
            s_phrase = " ".join(src[start:end + 1])
            t_phrase = " ".join(words)
            key = (s_phrase, t_phrase)
            if key in self.tm:
                for k in range(4):
                    tm[k] += self.tm[key][k]
                pair_ro = self.ro.get(key, [0.0] * 6)
            elif start == end and s_phrase not in self.src_in_table and t_phrase == s_phrase:
                unk -= 100.0          # pass-through of an unknown word
                pair_ro = [0.0] * 6
            else:
                raise DerivationError(f"sentence {sid}: '{s_phrase}' -> '{t_phrase}' is not in the phrase table")
            wp -= len(words)
            pp += 1
            # distortion: |prev_end + 1 - start|; the first phrase: start
            dist -= abs(start - (prev_span[1] + 1)) if prev_span else start
            # orientation of this phrase w.r.t. the previous one
            if prev_span is None:
                o = 0 if start == 0 else 2
            elif start == prev_span[1] + 1:
                o = 0
            elif prev_span[0] == end + 1:
                o = 1
            else:
                o = 2
            ro[o] += pair_ro[o]
            if prev_ro is not None:
                ro[3 + o] += prev_ro[3 + o]
            prev_span, prev_ro = (start, end), pair_ro
            target.extend(words)
        if not all(covered):
            raise DerivationError(f"sentence {sid}: words {[i for i, c in enumerate(covered) if not c]} uncovered")
        # the words' log10 probabilities summed in double, as the decoders (and, to the 6 digits it prints, Moses2)
        # sum them: kenlm.Model.score accumulates in single precision, up to 8e-5 off on a dev verse, which a
        # weighted total shows in its 6th digit
        lm = math.fsum(p for p, _, _ in self.lm.full_scores(" ".join(target), bos=True, eos=True)) * LN10
        values = {"UnknownWordPenalty": [unk], "WordPenalty": [wp], "PhrasePenalty": [pp],
                  "PhraseDictionaryMemory": tm, "LexicalReordering": ro, "Distortion": [dist], "KENLM": [lm]}
        features = {f.name: values[f.kind] for f in self.config.features}
        total = sum(w * v for f in self.config.features for w, v in zip(f.weights, features[f.name]))
        return Scored(features, total)
