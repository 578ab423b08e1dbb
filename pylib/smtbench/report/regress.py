"""CI regression check: the smoke run's metrics against a committed baseline.

A metric row is (experiment, key, metric, value, kind). ``kind`` is ``exact`` (correctness: checksums,
scores — any difference fails) or ``ratio`` (speed-ups measured within one run — drift beyond the
tolerance is reported, never failed: CI machines are noisy)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..ioutil import atomic_open
from .common import save_figure

COLUMNS = ["experiment", "key", "metric", "value", "kind"]


def read_metrics(paths: list[str | Path]) -> pd.DataFrame:
    frames = [pd.read_csv(p, dtype={"value": str}) for p in paths]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    missing = set(COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"metrics files lack columns {sorted(missing)}: {paths}")
    return df[COLUMNS]


@dataclass
class Verdict:
    table: pd.DataFrame
    failures: int
    drifts: int


def compare(current: pd.DataFrame, baseline: pd.DataFrame, tolerance: float) -> Verdict:
    idx = ["experiment", "key", "metric"]
    m = current.merge(baseline, on=idx, how="outer", suffixes=("", "_baseline"))
    m["kind"] = m["kind"].fillna(m["kind_baseline"])
    status = []
    for r in m.itertuples():
        if pd.isna(r.value):
            status.append("MISSING" if r.kind == "exact" else "missing")
        elif pd.isna(r.value_baseline):
            status.append("new")
        elif r.kind == "exact":
            status.append("ok" if str(r.value) == str(r.value_baseline) else "FAIL")
        else:
            cur, base = float(r.value), float(r.value_baseline)
            status.append("ok" if base == 0 or abs(cur / base - 1) <= tolerance else "drift")
    m["status"] = status
    m = m.drop(columns=["kind_baseline"])
    failures = int(m.status.isin(["FAIL", "MISSING"]).sum())
    return Verdict(m, failures, int((m.status == "drift").sum()))


def plot(verdict: Verdict, experiment: str, tolerance: float):
    """Ratio metrics of this run against the baseline (bars) with the tolerance band."""
    d = verdict.table
    d = d[(d.experiment == experiment) & (d.kind == "ratio")].dropna(subset=["value", "value_baseline"])
    fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(d) + 2), 4))
    if d.empty:
        ax.text(0.5, 0.5, "no ratio metrics", ha="center")
    else:
        x = np.arange(len(d))
        cur, base = d.value.astype(float).to_numpy(), d.value_baseline.astype(float).to_numpy()
        ax.bar(x - 0.2, base, 0.4, label="baseline", color="0.7")
        ax.bar(x + 0.2, cur, 0.4, label="this run",
               color=["tab:red" if s == "drift" else "tab:blue" for s in d.status])
        ax.errorbar(x - 0.2, base, yerr=tolerance * base, fmt="none", ecolor="0.3", capsize=3,
                    label=f"±{tolerance:.0%} tolerance")
        ax.set_xticks(x, [f"{k}\n{m}" for k, m in zip(d.key, d.metric)], rotation=60, ha="right", fontsize=7)
        ax.legend()
    exact = verdict.table[(verdict.table.experiment == experiment) & (verdict.table.kind == "exact")]
    bad = int(exact.status.isin(["FAIL", "MISSING"]).sum())
    ax.set_title(f"{experiment}: {len(exact) - bad}/{len(exact)} correctness metrics identical")
    return fig


def run(metric_files: list[str], baseline: str, tolerance: float, outdir: str, update: bool = False) -> int:
    current = read_metrics(metric_files)
    if update:
        with atomic_open(baseline) as fh:
            current.to_csv(fh, index=False)
        print(f"baseline written: {baseline} ({len(current)} metrics)")
        return 0
    base = read_metrics([baseline]) if Path(baseline).exists() else pd.DataFrame(columns=COLUMNS)
    v = compare(current, base, tolerance)
    out = Path(outdir)
    for exp in sorted(set(v.table.experiment)):
        save_figure(plot(v, exp, tolerance), out / f"regression_{exp}.png")
    with atomic_open(out / "regression.md") as fh:
        fh.write(f"# Smoke run against {baseline}\n\n{v.failures} correctness failures, {v.drifts} timing drifts "
                 f"beyond ±{tolerance:.0%} (reported, not failed).\n\n")
        fh.write(v.table.to_markdown(index=False, disable_numparse=True) + "\n")
    print(f"regression: {v.failures} correctness failures, {v.drifts} timing drifts (tolerance ±{tolerance:.0%})")
    if v.failures:
        print(v.table[v.table.status.isin(["FAIL", "MISSING"])].to_string(index=False))
    return 1 if v.failures else 0
