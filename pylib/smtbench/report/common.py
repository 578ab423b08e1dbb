"""Shared table/figure plumbing: read benchmark rows, the papers' published values, write tables."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import pandas as pd  # noqa: E402

from ..ioutil import atomic_open  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
PAPER_VALUES = ROOT / "resources" / "paper_values.csv"


def repo_root() -> Path:
    return ROOT


def results_dir() -> Path:
    """The results directory the notebooks read: ``$SMTBENCH_RESULTS`` if set (e.g. build/smoke, or a user's own
    run), else the committed ``results/`` of this checkout."""
    import os
    env = os.environ.get("SMTBENCH_RESULTS")
    return Path(env).resolve() if env else repo_root() / "results"


def read_rows(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate JSON-lines benchmark rows (one file per sweep point)."""
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise ValueError(f"{p}:{lineno}: not a JSON row ({exc.msg})") from exc
    if not rows:
        raise ValueError(f"no benchmark rows in {list(map(str, paths))}")
    df = pd.DataFrame(rows)
    machines = machines_of(df)
    if len(machines) > 1:
        raise ValueError(f"rows of {list(map(str, paths))} come from {len(machines)} machines ({'; '.join(machines)}): "
                         "a table compares rows of one machine -- re-run the experiment")
    return df


MACHINE_KEYS = ("machine_cpu", "machine_cores", "machine_l2", "machine_l3", "machine_mem_gib")


def machines_of(df: pd.DataFrame) -> list[str]:
    """The distinct machines (CPU, cores, caches, memory) the rows were measured on."""
    keys = [k for k in MACHINE_KEYS if k in df.columns]
    if not keys:
        return []
    combos = df[keys].astype(str).drop_duplicates()
    return [", ".join(f"{k.removeprefix('machine_')}={v}" for k, v in zip(keys, row)) for row in combos.itertuples(index=False)]


def paper_values(paper: str, table: str) -> pd.DataFrame:
    """The published numbers of one table, wide: one row per key, columns paper_<metric>, citation."""
    df = pd.read_csv(PAPER_VALUES)
    df = df[(df.paper == paper) & (df.table == table)]
    if df.empty:
        raise KeyError(f"no published values for {paper} {table} in {PAPER_VALUES}")
    wide = df.pivot_table(index="key", columns="metric", values="value", aggfunc="first")
    wide.columns = [f"paper_{c}" for c in wide.columns]
    cites = df.groupby("key")["citation"].first().rename("paper_citation")
    return wide.join(cites).reset_index()


def write_table(df: pd.DataFrame, stem: str | Path, title: str, notes: str = "") -> None:
    """Write ``stem``.csv and ``stem``.md (a titled Markdown table) atomically."""
    stem = Path(stem)
    with atomic_open(stem.with_suffix(".csv")) as fh:
        df.to_csv(fh, index=False, float_format="%.6g")
    md = f"# {title}\n\n" + df.to_markdown(index=False, floatfmt=".4g") + "\n"
    if notes:
        md += f"\n{notes.strip()}\n"
    with atomic_open(stem.with_suffix(".md")) as fh:
        fh.write(md)


def save_figure(fig, path: str | Path) -> None:
    """Save a matplotlib figure atomically as PNG."""
    with atomic_open(path, "wb", encoding=None) as fh:
        fig.savefig(fh, format="png", dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
