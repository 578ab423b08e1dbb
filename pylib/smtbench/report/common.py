"""Shared table/figure plumbing: read benchmark rows, the papers' published values, write tables."""
from __future__ import annotations

import json
import math
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


ORACLE_INI = "../shared/oracles/moses-bible-dev/moses.ini, the Moses oracle's model"  # as the rules name it


def model_note(rows: pd.DataFrame, before: str = ORACLE_INI) -> str:
    """The sentence "Model: <the moses.ini the rows decoded>." for a table's notes: the rows record it (field `model`); rows written
    before they did (the committed oracle runs) decoded `before`."""
    models = sorted({str(m) for m in rows["model"].dropna()}) if "model" in rows else []
    trained = any("work/tm/" in m or "/trained/" in m for m in models)  # md_model("trained"), moore_quirk's
    what = (" (the workflow's own trained model)" if trained and len(models) == 1 else
            " (the Moses oracle's model)" if models and all("moses-bible-dev" in m for m in models) else "")
    if not models:
        return f"Model: {before} (these rows predate the rows' `model` field)."
    inputs = sorted({str(m) for m in rows["input"].dropna()}) if "input" in rows else []
    return f"Model: {', '.join(models)}{what}" + (f"; input: {', '.join(inputs)}." if inputs else ".")


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


def point_mask(rows: pd.DataFrame, point: dict) -> pd.Series:
    """The rows of one timed point: every column named in ``point`` equal to its value."""
    m = pd.Series(True, index=rows.index)
    for k, v in point.items():
        m &= rows[k] == v
    return m


def add_interval(out: pd.DataFrame, ratio: str, per_row: list[list[float]]) -> pd.DataFrame:
    """Put ``<ratio>_paired`` (the geometric mean of each table row's per-repeat paired ratios), ``<ratio>_ci_low``
    / ``<ratio>_ci_high`` (their 95% interval, smtbench.protocol.ratio_ci) right after the ``ratio`` column and keep
    ``n_repeats`` (the most repeats any of the row's intervals rests on) as the table's last measured column. Rows
    from before the protocol with one repeat, or none paired, get no interval (empty cells)."""
    from ..protocol import ratio_ci

    cis = [ratio_ci(r) for r in per_row]
    at = list(out.columns).index(ratio) + 1 if ratio in out.columns else len(out.columns)
    out = out.copy()
    # the interval's own point estimate (geometric mean of the paired per-repeat ratios) first: it always lies
    # inside the interval, which the ratio column's best-of-repeats definition does not promise
    paired = [c.estimate if c.n >= 2 else math.nan for c in cis]
    for i, (suffix, vals) in enumerate((("_paired", paired), ("_ci_low", [c.low for c in cis]),
                                        ("_ci_high", [c.high for c in cis]))):
        col = ratio + suffix
        if col in out.columns:
            out = out.drop(columns=col)
        out.insert(at + i, col, [round(v, 4) if v == v else float("nan") for v in vals])
    n = pd.Series([c.n for c in cis], index=out.index)
    out["n_repeats"] = n if "n_repeats" not in out.columns else pd.concat([out["n_repeats"], n], axis=1).max(axis=1)
    out["n_repeats"] = out["n_repeats"].astype(int)
    return out


def judge_target(ci_low: float, ci_high: float, value: float, target: float) -> str:
    """A target ('>= target x') judged on the interval: 'meets' when its lower bound reaches the target, 'misses'
    when its upper bound stays below, 'undecided' when it straddles; rows without an interval (old rows) are judged
    on the value alone and say so."""
    if ci_low == ci_low and ci_high == ci_high:
        return "meets (lower bound)" if ci_low >= target else ("misses (upper bound)" if ci_high < target
                                                               else "undecided (interval straddles)")
    if value != value:
        return ""
    return "meets (value, no interval)" if value >= target else "misses (value, no interval)"


def move_last(out: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """Move ``cols`` (those present) just before the first paper_* column (or to the end)."""
    cols = [c for c in cols if c in out.columns]
    rest = [c for c in out.columns if c not in cols]
    at = next((i for i, c in enumerate(rest) if c.startswith("paper_")), len(rest))
    return out[rest[:at] + cols + rest[at:]]


INTERVAL_NOTE = ("`<ratio>_ci_low` / `<ratio>_ci_high`: the ratio's 95% interval over the run's repeats, each repeat's "
                 "ratio computed from that repeat's paired points (expanded percentile bootstrap of the mean log-ratio, "
                 "smtbench.protocol); `n_repeats`: the repeats it rests on; `retaken_repeats`: repeats a slow spell "
                 "(memory-latency probe above its factor x the run's calibration) had retaken; `spell_probe_ns` (where shown): the "
                 "median probe of the kept repeats, one view of the run's memory regime. Latency-hiding ratios move with "
                 "the regime between runs, beyond these within-run intervals, and that probe does not see every "
                 "regime (a whole sweep can run with slower lookups, ours and KenLM's, under an unchanged probe: "
                 "CONTRIBUTING.md, 'Between runs'): an interval says how well one run pinned its ratio, not that the "
                 "next run will agree. `regime_probe_ns` (where shown): the median of a working-set probe (the "
                 "sequential scorer over the model's own memory, the first ~200,000 queries) around the kept repeats; "
                 "`regime`: that / the machine's reference (config/regime-reference.json; repeats off it by more than "
                 "its factor were retaken after pauses, `regime_off_kept` of them kept when no wait was left): runs "
                 "agree only at the same regime. `<ratio>_paired`: the "
                 "interval's point estimate, the geometric mean of the per-repeat paired ratios (always inside the "
                 "interval). The ratio column itself keeps its definition (best times), so on a noisy machine it can "
                 "fall outside its interval: the best of each point's repeats came from different moments; the paired "
                 "estimate and its interval are the statement to trust, and a target is judged on the lower bound. "
                 "Empty interval cells: one repeat, or "
                 "rows that cannot be paired (rows from before the protocol without a repeat index, a point timed "
                 "outside the paired loop).")
