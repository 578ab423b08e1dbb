"""Shared benchmark plumbing: repeats → min/median, machine facts on every row, JSON-lines output."""
from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TextIO

from .machine import facts, row_fields


@dataclass
class RowWriter:
    """Writes one JSON object per line to ``out``; every row carries the machine fingerprint and
    the experiment name. Construct once per process (the facts are gathered once; the load
    average is re-read per row)."""

    experiment: str
    out: TextIO = sys.stdout
    _machine: dict[str, Any] = field(default_factory=lambda: facts(with_gpu=False))

    def emit(self, **fields: Any) -> dict[str, Any]:
        row = {"experiment": self.experiment, **fields, **row_fields(self._machine)}
        self.out.write(json.dumps(row) + "\n")
        self.out.flush()
        return row


def summarize(samples_ns: Iterable[float]) -> dict[str, float]:
    xs = sorted(samples_ns)
    return {"min": xs[0], "median": statistics.median(xs), "max": xs[-1], "n": len(xs)}


def time_call(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(elapsed ns, result) of one call, monotonic clock."""
    t0 = time.perf_counter_ns()
    res = fn()
    return float(time.perf_counter_ns() - t0), res


def parse_int_list(text: str) -> list[int]:
    """'0,2,4' or '0-16' or '0-16:2' → list of ints (for sweep options)."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            rng, _, step = part.partition(":")
            lo, hi = rng.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1, int(step or 1)))
        else:
            out.append(int(part))
    if not out:
        raise ValueError(f"empty list: {text!r}")
    return out


def parse_size(text: str) -> int:
    """'64M', '4G', '512K', '123' → bytes."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(t)
