"""The cluster forms against their one-job runs: sharded decoding (`smtbench report decode_shards`,
decode_shards.smk) and Mediani's distributed scoring (`smtbench report mediani_distributed`; tm_train.smk's
partition / score-with-partial-counts / merge). Each pair is a split-and-merged output and the same output from one
job; they must be byte-identical (compressed files are compared decompressed: a gzip header carries a name and a
time). The table lists every pair; the metrics are `identical` (1) per pair, kind exact; anything else fails the
rule, naming both files."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pandas as pd

from ..ioutil import open_binary


class NotIdenticalError(ValueError):
    """A split-and-merged output differs from its one-job run; the message names both files."""


@dataclass(frozen=True)
class Pair:
    key: str     # e.g. search=cube
    output: str  # e.g. nbest
    merged: str
    single: str


def _digest(path: str) -> tuple[str, int]:
    h = hashlib.sha256()
    lines = 0
    with open_binary(path) as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            lines += chunk.count(b"\n")
    return h.hexdigest(), lines


def compare(pairs: list[Pair]) -> pd.DataFrame:
    """One row per pair (digests, line counts, identical); raises NotIdenticalError on the first difference."""
    rows = []
    for p in pairs:
        (dm, lm), (ds, ls) = _digest(p.merged), _digest(p.single)
        if dm != ds:
            raise NotIdenticalError(f"{p.merged}: differs from the one-job run {p.single} ({lm} vs {ls} lines)")
        rows.append({"key": p.key, "output": p.output, "lines": lm, "sha256": dm[:16], "identical": True,
                     "merged": p.merged, "single": p.single})
    return pd.DataFrame(rows)


def metric_records(experiment: str, table: pd.DataFrame) -> list[tuple[str, str, str, str, str]]:
    """`identical_<output>` = 1 per key (exact). No digest or line count: the workflow's model comes from an eflomal
    alignment, which is unseeded, so the outputs themselves change between fresh runs; their equality does not."""
    return [(experiment, str(r.key), f"identical_{r.output}", "1", "exact") for r in table.itertuples()]
