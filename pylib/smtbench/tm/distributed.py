"""The distributed form (Mediani §3.3): partition the corpus, score each partition's extract with partial
counts (`smtbench tm score --counts`), then merge the partial counts and re-estimate
(`smtbench tm score --weighted part*.counts.gz`).

Extraction is per sentence, so splitting the extract file between sentences is the same as extracting from a
partition of the corpus; the lex tables are global (Mediani: per-part word counts are combined globally).
"""
from __future__ import annotations

from pathlib import Path

from ..ioutil import atomic_open, open_text


def partition_extract(extract: str, parts: int, outdir: str) -> list[str]:
    """Split into ``parts`` contiguous pieces of (about) equal line counts, cutting only between sentences
    would need sentence ids; any line boundary is a valid cut for scoring (counts add up), so cut by lines."""
    if parts < 1:
        raise ValueError("parts must be >= 1")
    with open_text(extract) as fh:
        n = sum(1 for _ in fh)
    out = [str(Path(outdir) / f"part{k}.extract.gz") for k in range(parts)]
    bounds = [n * k // parts for k in range(parts + 1)]
    with open_text(extract) as fh:
        for k in range(parts):
            with atomic_open(out[k]) as fo:
                for _ in range(bounds[k + 1] - bounds[k]):
                    fo.write(fh.readline())
    return out
