"""Shared benchmark plumbing: repeats → min/median, machine facts on every row, JSON-lines output."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from .machine import facts, row_fields


@dataclass
class RowWriter:
    """Writes one JSON object per line to ``out``; every row carries the machine fingerprint and
    the experiment name. Construct once per process (the facts are gathered once; the load
    average is re-read per row)."""

    experiment: str
    out: TextIO = sys.stdout
    _machine: dict[str, Any] = field(default_factory=lambda: facts(with_gpu=False))
    context: dict[str, Any] = field(default_factory=dict)  # the repeat protocol's fields, added to every row
    _held: list[dict[str, Any]] | None = None
    fixed: dict[str, Any] = field(default_factory=dict)  # fields of the whole run (e.g. the model), on every row

    def __post_init__(self) -> None:
        check_expected_build()

    def emit(self, **fields: Any) -> dict[str, Any]:
        row = {"experiment": self.experiment, **self.fixed, **fields, **self.context, **row_fields(self._machine)}
        if self._held is not None:
            self._held.append(row)
            return row
        self.out.write(json.dumps(row) + "\n")
        self.out.flush()
        return row

    def hold(self) -> None:
        """Keep the rows emitted from now on (returned to the caller as usual) until :meth:`release`."""
        self._held = []

    def release(self, **extra: Any) -> None:
        """Add ``extra`` to every held row (the dicts the caller got back are updated too) and write them."""
        held, self._held = self._held or [], None
        for row in held:
            row.update(extra)
            self.out.write(json.dumps(row) + "\n")
        self.out.flush()


def model_path(ini: str) -> str:
    """How rows name the decoded model (and its input): its moses.ini as given, made absolute when given without a
    folder (a rule that runs from the model's own folder)."""
    import os
    return ini if os.path.dirname(ini) else os.path.abspath(ini)


def check_expected_build() -> None:
    """When $SMTBENCH_EXPECT_BUILD names a profile's build stamp (the workflow's timing rules set it), the loaded C
    extension must have been compiled with that stamp's flags: the extension is one file shared by all profiles,
    and a measurement with another profile's build must fail loudly, not be recorded."""
    import json
    import os
    from pathlib import Path

    stamp = os.environ.get("SMTBENCH_EXPECT_BUILD")
    if not stamp:
        return
    from .native import buildinfo

    from .errors import StaleBuild

    want = " ".join(json.loads(Path(stamp).read_text())["cflags"]).replace('"', "")
    have = buildinfo()["cflags_compiled"]
    if want != have:
        raise StaleBuild(f"the loaded C extension was built with flags {have!r}, but this profile's build "
                           f"({stamp}) wants {want!r}: another profile rebuilt it since; remove {stamp} and rerun "
                           f"(Snakemake then rebuilds it and redoes the measurements)")


def parse_int_list(text: str, lo: int | None = None, hi: int | None = None, name: str = "list",
                   max_items: int = 10_000) -> list[int]:
    """'0,2,4' or '0-16' or '0-16:2' → list of ints (for sweep options). Every value (and every range's ends,
    before the range is expanded) must lie in [lo, hi]; at most ``max_items`` values."""
    def bounded(v: int) -> int:
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f"{name} {text!r}: {v} is outside {lo}..{hi}")
        return v

    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                rng, _, step = part.partition(":")
                a, b = rng.split("-", 1)
                a_, b_, st = bounded(int(a)), bounded(int(b)), int(step or 1)
                if st < 1:
                    raise ValueError(f"{name} {text!r}: step {st} must be >= 1")
                count = max(0, (b_ - a_) // st + 1)
                if len(out) + count > max_items:
                    raise ValueError(f"{name} {text!r}: more than {max_items} values")
                out.extend(range(a_, b_ + 1, st))
            else:
                out.append(bounded(int(part)))
        except ValueError as exc:
            if str(exc).startswith(name):
                raise
            raise ValueError(f"{name} {text!r}: {part!r} is not an integer, a range a-b or a-b:step") from None
        if len(out) > max_items:
            raise ValueError(f"{name} {text!r}: more than {max_items} values")
    if not out:
        raise ValueError(f"{name}: empty list: {text!r}")
    return out


def parse_size(text: str, name: str = "size", lo: int = 1, hi: int = 1 << 50) -> int:
    """'64M', '4G', '512K', '123' → bytes, within [lo, hi] (a clear error for anything else)."""
    import math
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    try:
        if t and t[-1] in mult:
            v = float(t[:-1]) * mult[t[-1]]
        else:
            v = float(t)
    except ValueError:
        raise ValueError(f"{name} {text!r}: not a size (e.g. 64M, 4G, 512K, 123)") from None
    if not math.isfinite(v) or v != v:
        raise ValueError(f"{name} {text!r}: not a finite size")
    if not lo <= v <= hi:
        raise ValueError(f"{name} {text!r}: must be between {lo} and {hi} bytes")
    return int(v)


def require_range(name: str, value: float, lo: float, hi: float) -> None:
    """A clear error naming the option and its limits (before anything is allocated)."""
    if not (lo <= value <= hi):
        raise ValueError(f"{name} {value}: must be in {lo}..{hi}")
