"""Moses n-best lists: `id ||| text ||| Name= v v Name= v ... ||| total` (Moses2: ini order, 0-based ids)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Iterator

from ..ioutil import printed_tolerance  # noqa: F401  (its home is ioutil; this name stays for older callers)
from ..ioutil import words as split_words


class NbestFormatError(ValueError):
    """A malformed n-best line; the message names file:line."""


@dataclass
class NbestEntry:
    sid: int
    text: str
    features: dict[str, list[float]]
    total: float
    line: int


def parse_features(field: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    name = None
    for tok in split_words(field):
        if tok.endswith("="):
            name = tok[:-1]
            out[name] = []
        elif name is None:
            raise ValueError(f"a value before any feature name: {tok!r}")
        else:
            out[name].append(float(tok))
    return out


def read_nbest(fh: IO[str], name: str = "<n-best>") -> Iterator[NbestEntry]:
    for lineno, line in enumerate(fh, 1):
        parts = line.rstrip("\n").split(" ||| ")
        if len(parts) < 4:
            raise NbestFormatError(f"{name}:{lineno}: expected 'id ||| text ||| features ||| total'")
        try:
            yield NbestEntry(int(parts[0]), parts[1].strip(), parse_features(parts[2]), float(parts[3]), lineno)
        except ValueError as exc:
            raise NbestFormatError(f"{name}:{lineno}: {exc}") from None
