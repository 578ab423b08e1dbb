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


@dataclass
class Identity:
    """A live peer's 1-best lines against ours, line by line (:func:`peer_identity`)."""
    peer: str
    sentences: int
    identical: int                  # same text, scores tied
    ties: int                       # text differs, model scores tie at the peer's printed precision
    ours_higher: int                # ours scores higher (beyond the tie)
    theirs_higher: list[tuple[int, float, float]] = field(default_factory=list)  # (line index, ours, theirs)
    tie: float = 1e-3

    def as_dict(self, prefix: str) -> dict:
        return {f"{prefix}_identical": self.identical, f"{prefix}_ties": self.ties,
                f"{prefix}_score_ge": self.identical + self.ties + self.ours_higher,
                f"{prefix}_ours_higher": self.ours_higher, f"{prefix}_theirs_higher": len(self.theirs_higher),
                f"{prefix}_theirs_higher_list": [list(w) for w in self.theirs_higher[:50]],
                f"{prefix}_tie": self.tie}


#: peers whose search is ours (Moses2's normal and cube pruning: csrc/pb follows Moses2): a line where such a peer
#: finds a better-scoring translation than ours is a bug of ours and stops the run; other peers (Moses v1, whose
#: normal search orders and recombines hypotheses otherwise) have their differences counted as search differences
STRICT_PEERS = frozenset({"moses2"})


def printed_digits(texts: Sequence[str]) -> int:
    """The decimals a peer printed its scores with (the most any of ``texts`` has; 3 where none has any)."""
    return max((d for d in line_decimals(texts) if d is not None), default=3)


def line_decimals(texts: Sequence[str]) -> list[int | None]:
    """The decimals each of ``texts`` was printed with (None: no decimal point, or an exponent). Moses2 prints its
    scores with 3 decimals, Moses v1 with 6 significant digits and trailing zeros dropped (-566.57, -232.577,
    -9.12345): only the line's own last digit says how precise that line is."""
    return [len(t.partition(".")[2]) if "." in t and "e" not in t.lower() else None for t in texts]


def peer_identity(peer: str, ours: Sequence[str], ours_scores: Sequence[float], theirs: Sequence[str],
                  theirs_scores: Sequence[float], digits: int = 3, where: str = "",
                  strict: bool | None = None, line_digits: Sequence[int | None] | None = None) -> Identity:
    """The one identity rule for a live decoding peer. Per line: identical (same text, scores tied), a tie (text
    differs, model scores equal at the peer's printed precision: within one unit of the last digit it printed on
    that line, 10^-line_digits[i] (``digits`` where no per-line decimals are given or the line has none), which
    covers either side's rounding), ours higher, or theirs higher. A line where a
    strict peer (``strict``; None: whether ``peer`` is in STRICT_PEERS, Moses2; config/peers.yaml's ``identity:
    strict``) scores higher than ours stops the run (errors.ResultMismatch, one line naming the first such line); for
    any other peer (Moses v1) those lines are counted, not fatal (search differences)."""
    from ..errors import ResultMismatch

    n = len(ours)
    if not (len(ours_scores) == len(theirs) == len(theirs_scores) == n):
        raise ValueError(f"{peer}: outputs and scores must have one line per sentence on both sides "
                         f"(ours {n}/{len(ours_scores)}, theirs {len(theirs)}/{len(theirs_scores)})")
    if line_digits is not None and len(line_digits) != n:
        raise ValueError(f"{peer}: {len(line_digits)} printed precisions for {n} lines")
    tie = 10.0 ** -digits + 1e-9
    c = Identity(peer=peer, sentences=n, identical=0, ties=0, ours_higher=0, tie=round(tie, 9))
    for i, (a, b, sa, sb) in enumerate(zip(ours, theirs, ours_scores, theirs_scores)):
        d = line_digits[i] if line_digits is not None else None
        if abs(sa - sb) <= (tie if d is None else 10.0 ** -d + 1e-9):
            if a == b:
                c.identical += 1
            else:
                c.ties += 1
        elif sa > sb:
            c.ours_higher += 1
        else:
            c.theirs_higher.append((i, sa, sb))
    if c.theirs_higher and (peer in STRICT_PEERS if strict is None else strict):
        i, sa, sb = c.theirs_higher[0]
        raise ResultMismatch(f"{where or peer}: line {i + 1}: {peer} found a better translation than ours (model score "
                             f"{sb:.{digits}f} > ours {sa:.{digits}f}; {len(c.theirs_higher)} such line(s) of {n}): "
                             f"our search missed it")
    return c
