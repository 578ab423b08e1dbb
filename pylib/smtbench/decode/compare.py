"""Compare a decoder's outputs with a reference run (Moses2's, Moses v1's or ours): BLEU (sacrebleu on the
tokenized lowercased text, no further tokenization), identical 1-best lines, model scores."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence


def read_lines(path: str | Path) -> list[str]:
    from ..ioutil import open_text
    with open_text(path) as fh:
        return [line.rstrip("\n").strip() for line in fh]


def read_scores(path: str | Path) -> list[float]:
    return [float(x) for x in read_lines(path)]


def best_of(decoder, lines: Sequence[str], source: str) -> tuple[list[str], list[float]]:
    """Each line's 1-best text and model score ("" and 0.0 where there is none) from any of our decoders;
    ``source`` names the input in error messages (``source:lineno``)."""
    texts, scores = [], []
    for i, line in enumerate(lines):
        b = decoder.translate(line, f"{source}:{i + 1}").best
        texts.append(b.text if b else "")
        scores.append(b.total if b else 0.0)
    return texts, scores


def bleu(hyps: Sequence[str], refs: Sequence[str]) -> float:
    import sacrebleu
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    return float(sacrebleu.corpus_bleu(list(hyps), [list(refs)], tokenize="none", force=True).score)


@dataclass
class Comparison:
    sentences: int
    identical: int
    score_ge: int                   # ours >= theirs - tolerance
    better: int                     # ours > theirs + tolerance
    worse: list[tuple[int, float, float]] = field(default_factory=list)  # (line index, ours, theirs)

    def as_dict(self, prefix: str) -> dict:
        return {f"{prefix}_identical": self.identical, f"{prefix}_score_ge": self.score_ge,
                f"{prefix}_better": self.better, f"{prefix}_worse": len(self.worse),
                f"{prefix}_worse_list": [list(w) for w in self.worse[:50]]}


def compare(ours: Sequence[str], ours_scores: Sequence[float], theirs: Sequence[str],
            theirs_scores: Sequence[float], tolerance: float = 1e-3) -> Comparison:
    n = len(ours)
    if not (len(ours_scores) == len(theirs) == len(theirs_scores) == n):
        raise ValueError("outputs and scores must have one line per sentence on both sides")
    c = Comparison(sentences=n, identical=sum(a == b for a, b in zip(ours, theirs)), score_ge=0, better=0)
    for i, (a, b) in enumerate(zip(ours_scores, theirs_scores)):
        if a >= b - tolerance:
            c.score_ge += 1
            if a > b + tolerance:
                c.better += 1
        else:
            c.worse.append((i, a, b))
    return c
