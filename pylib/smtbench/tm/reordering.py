"""Lexicalized reordering tables as Moses' `lexical-reordering-score extract.o 0.5 ... --model "wbe msd
wbe-msd-bidirectional-fe"` writes them (see shared/notes/moses-training-formats.md):
``F ||| E ||| m_prev s_prev d_prev m_next s_next d_next`` with P(o) = (count(o) + s) / (total + 3 s), s = 0.5."""
from __future__ import annotations

from typing import Iterable

from ..ioutil import atomic_open, open_text
from ..ioutil import words as split_words

_INDEX = {"mono": 0, "swap": 1, "other": 2}


class OrientationFormatError(ValueError):
    """A malformed orientation (extract.o) line; names file:line."""


def count_orientations(paths: Iterable[str], progress: bool = False) -> dict[tuple[str, str], list[int]]:
    from ..progress import bar
    counts: dict[tuple[str, str], list[int]] = {}
    for path in paths:
        with open_text(path) as fh, bar(f"reorder: count {path}", unit="line", on=progress) as pb:
            for lineno, line in enumerate(fh, 1):
                if not lineno & 0x3FFF:
                    pb.update(0x4000)
                parts = line.rstrip("\n").split(" ||| ")
                if len(parts) != 3:
                    raise OrientationFormatError(f"{path}:{lineno}: expected 'F ||| E ||| prev next'")
                o = split_words(parts[2])
                if len(o) != 2 or o[0] not in _INDEX or o[1] not in _INDEX:
                    raise OrientationFormatError(f"{path}:{lineno}: orientations must be two of mono/swap/other")
                c = counts.get((parts[0], parts[1]))
                if c is None:
                    c = counts[(parts[0], parts[1])] = [0] * 6
                c[_INDEX[o[0]]] += 1
                c[3 + _INDEX[o[1]]] += 1
    return counts


def pair_key(f: str, e: str) -> bytes:
    """Moses' tables are sorted by their lines' bytes (LC_ALL=C sort)."""
    return f"{f} ||| {e}".encode("utf-8")


def write_reordering(counts: dict[tuple[str, str], list[int]], out: str, smoothing: float = 0.5) -> int:
    if not smoothing >= 0:
        raise ValueError(f"smoothing {smoothing}: must be >= 0")
    with atomic_open(out) as fh:
        for f, e in sorted(counts, key=lambda k: pair_key(*k)):
            c = counts[(f, e)]
            tp, tn = sum(c[:3]), sum(c[3:])
            vals = [(x + smoothing) / (tp + 3 * smoothing) for x in c[:3]] + \
                   [(x + smoothing) / (tn + 3 * smoothing) for x in c[3:]]
            fh.write(f"{f} ||| {e} ||| {' '.join(format(v, '.6g') for v in vals)}\n")
    return len(counts)


def score_reordering(orientation_files: Iterable[str], out: str, smoothing: float = 0.5,
                     progress: bool = False) -> int:
    return write_reordering(count_orientations(orientation_files, progress), out, smoothing)
