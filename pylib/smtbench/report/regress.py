"""CI regression check: the smoke run's metrics against a committed baseline.

A metric row is (experiment, key, metric, value, kind). ``kind`` is ``exact`` (correctness: checksums,
scores — any difference fails), ``ratio`` (speed-ups measured within one run) or ``ci`` (a ratio's 95% interval
over the run's paired repeats: ``<ratio>_ci_low`` / ``_ci_high``, and ``<ratio>_paired``, the estimate the interval
is centred on; smtbench.protocol). A ratio drifts when the baseline's estimate lies outside this run's interval and
this run's estimate outside the baseline's (both intervals, when both runs have them; the one there is otherwise). A
side's estimate is its ``_paired`` record where it has one, else its ratio value (a baseline written before the
estimates were recorded): the ratio value is of the points' best times, which can lie outside its own interval, so
it is compared with an interval only where no estimate exists. Only a ratio with no interval on either side falls
back to the fixed tolerance. Drift is reported, never failed: CI machines are noisy."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..ioutil import atomic_open
from .common import save_figure

if TYPE_CHECKING:
    from .. import counts

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


def _intervals(df: pd.DataFrame) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(experiment, key, ratio metric) -> (low, high) from the ``ci`` rows."""
    ci = df[df.kind == "ci"]
    lo = {(e, k, m.removesuffix("_ci_low")): float(v) for e, k, m, v in zip(ci.experiment, ci.key, ci.metric, ci.value)
          if m.endswith("_ci_low")}
    hi = {(e, k, m.removesuffix("_ci_high")): float(v) for e, k, m, v in zip(ci.experiment, ci.key, ci.metric, ci.value)
          if m.endswith("_ci_high")}
    return {k: (lo[k], hi[k]) for k in lo if k in hi}


def _estimates(df: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """(experiment, key, ratio metric) -> the interval's estimate, from the ``ci`` rows ``<ratio>_paired``."""
    from .metrics import PAIRED
    ci = df[df.kind == "ci"]
    return {(e, k, m.removesuffix(PAIRED)): float(v) for e, k, m, v in zip(ci.experiment, ci.key, ci.metric, ci.value)
            if m.endswith(PAIRED)}


def compare(current: pd.DataFrame, baseline: pd.DataFrame, tolerance: float,
            not_run: dict[str, str] | None = None) -> Verdict:
    """``not_run``: experiment -> why the workflow did not schedule it here (its NOT_RUN, e.g. no Moses oracle beside
    this clone): its baseline rows read "not run: <why>", not MISSING, and fail nothing."""
    not_run = not_run or {}
    idx = ["experiment", "key", "metric"]
    cur_ci, base_ci = _intervals(current), _intervals(baseline)
    cur_est, base_est = _estimates(current), _estimates(baseline)
    current, baseline = current[current.kind != "ci"], baseline[baseline.kind != "ci"]
    m = current.merge(baseline, on=idx, how="outer", suffixes=("", "_baseline"))
    m["kind"] = m["kind"].fillna(m["kind_baseline"])
    # what an interval is compared with: each side's estimate (its ratio value where it recorded none)
    for col, src, val in (("estimate", cur_est, m.value), ("estimate_baseline", base_est, m.value_baseline)):
        m[col] = [src.get((e, k, mt), np.nan) if kd != "exact" else np.nan
                  for e, k, mt, kd in zip(m.experiment, m.key, m.metric, m.kind)]
        m[col] = m[col].fillna(pd.to_numeric(val.where(m.kind != "exact"), errors="coerce"))
    status = []
    for r in m.itertuples():
        if pd.isna(r.value) and r.experiment in not_run:
            status.append(f"not run: {not_run[r.experiment]}")
        elif pd.isna(r.value):
            status.append("MISSING" if r.kind == "exact" else "missing")
        elif pd.isna(r.value_baseline):
            status.append("new")
        elif r.kind == "exact":
            status.append("ok" if str(r.value) == str(r.value_baseline) else "FAIL")
        else:
            cur, base = float(r.value), float(r.value_baseline)
            k = (r.experiment, r.key, r.metric)
            ci, bci = cur_ci.get(k), base_ci.get(k)
            if ci or bci:  # judged against the interval(s), with the estimates they are centred on
                out_cur = ci is not None and not ci[0] <= float(r.estimate_baseline) <= ci[1]
                out_base = bci is not None and not bci[0] <= float(r.estimate) <= bci[1]
                status.append("drift" if (out_cur or ci is None) and (out_base or bci is None) else "ok")
            else:
                status.append("ok" if base == 0 or abs(cur / base - 1) <= tolerance else "drift")
    m["status"] = status
    for col, src in (("ci_low", cur_ci), ("ci_high", cur_ci), ("ci_low_baseline", base_ci),
                     ("ci_high_baseline", base_ci)):
        j = 0 if "low" in col else 1
        m[col] = [src[(e, k, mt)][j] if (e, k, mt) in src else np.nan
                  for e, k, mt in zip(m.experiment, m.key, m.metric)]
    m = m.drop(columns=["kind_baseline"])
    failures = int(m.status.isin(["FAIL", "MISSING"]).sum())
    return Verdict(m, failures, int((m.status == "drift").sum()))


def plot(verdict: Verdict, experiment: str, tolerance: float):
    """Ratio metrics of this run against the baseline (bars: each side's interval estimate, its ratio value where it
    has none) with their 95% intervals (error bars; the tolerance band where a side has no interval)."""
    d = verdict.table
    d = d[(d.experiment == experiment) & (d.kind == "ratio")].dropna(subset=["value", "value_baseline"])
    fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(d) + 2), 4))
    if d.empty:
        ax.text(0.5, 0.5, "no ratio metrics", ha="center")
    else:
        x = np.arange(len(d))
        cur, base = d.estimate.astype(float).to_numpy(), d.estimate_baseline.astype(float).to_numpy()
        ax.bar(x - 0.2, base, 0.4, label="baseline", color="0.7")
        ax.bar(x + 0.2, cur, 0.4, label="this run",
               color=["tab:red" if s == "drift" else "tab:blue" for s in d.status])

        def yerr(v, lo, hi):
            lo, hi = lo.astype(float).to_numpy(), hi.astype(float).to_numpy()
            return np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])

        has_b, has_c = d.ci_low_baseline.notna().to_numpy(), d.ci_low.notna().to_numpy()
        if has_b.any():
            ax.errorbar((x - 0.2)[has_b], base[has_b], yerr=yerr(base[has_b], d.ci_low_baseline[has_b],
                                                                  d.ci_high_baseline[has_b]),
                        fmt="none", ecolor="0.2", capsize=3, label="95% interval")
        if has_c.any():
            ax.errorbar((x + 0.2)[has_c], cur[has_c], yerr=yerr(cur[has_c], d.ci_low[has_c], d.ci_high[has_c]),
                        fmt="none", ecolor="0.2", capsize=3)
        none = ~has_b & ~has_c
        if none.any():
            ax.errorbar((x - 0.2)[none], base[none], yerr=tolerance * base[none], fmt="none", ecolor="0.6",
                        capsize=3, ls=":", label=f"±{tolerance:.0%} tolerance (no interval)")
        ax.set_xticks(x, [f"{k}\n{m}" for k, m in zip(d.key, d.metric)], rotation=60, ha="right", fontsize=7)
        ax.legend()
    exact = verdict.table[(verdict.table.experiment == experiment) & (verdict.table.kind == "exact")]
    bad = int(exact.status.isin(["FAIL", "MISSING"]).sum())
    ax.set_title(f"{experiment}: {len(exact) - bad}/{len(exact)} correctness metrics identical")
    return fig


def run(metric_files: list[str], baseline: str, tolerance: float, outdir: str, update: bool = False,
        not_run: list[str] | None = None) -> int:
    """``not_run``: the workflow's NOT_RUN entries, ``experiment:why``."""
    current = read_metrics(metric_files)
    if update:
        with atomic_open(baseline) as fh:
            current.to_csv(fh, index=False)
        print(f"baseline written: {baseline} ({len(current)} metrics)")
        return 0
    base = read_metrics([baseline]) if Path(baseline).exists() else pd.DataFrame(columns=COLUMNS)
    v = compare(current, base, tolerance, dict(x.split(":", 1) if ":" in x else (x, "not scheduled here")
                                               for x in (not_run or [])))
    out = Path(outdir)
    for exp in sorted(set(v.table.experiment)):
        save_figure(plot(v, exp, tolerance), out / f"regression_{exp}.png")
    with atomic_open(out / "regression.md") as fh:
        fh.write(f"# Smoke run against {baseline}\n\n{v.failures} correctness failures, {v.drifts} timing drifts "
                 f"(a ratio outside the other run's 95% interval; ±{tolerance:.0%} where neither run has one; "
                 f"reported, not failed).\n\n")
        fh.write(v.table.to_markdown(index=False, disable_numparse=True) + "\n")
    print(f"regression: {v.failures} correctness failures, {v.drifts} timing drifts (against the intervals; "
          f"tolerance ±{tolerance:.0%} without one)")
    if v.failures:
        print(v.table[v.table.status.isin(["FAIL", "MISSING"])].to_string(index=False))
    return 1 if v.failures else 0


def plot_counts(v: "counts.Verdict", path: str | Path) -> None:
    """(`smtbench count --check --figure`) Each count of this run over its baseline (1 = unchanged), the tolerance as a band; regressions red."""
    from ..counts import DEFAULT_TOLERANCE, METRICS
    from .common import save_figure

    rows = [r for r in v.table if r["value"] is not None and r["baseline"]]
    metrics = list(METRICS)
    points = sorted({r["point"] for r in rows})
    fig, axes = plt.subplots(1, len(metrics), figsize=(3 * len(metrics), 0.35 * len(points) + 1.8), sharey=True,
                             squeeze=False)
    for ax, m in zip(axes[0], metrics):
        rs = {r["point"]: r for r in rows if r["metric"] == m}
        ys = [i for i, p in enumerate(points) if p in rs]
        xs = [rs[points[i]]["value"] / rs[points[i]]["baseline"] for i in ys]
        tol = max((rs[points[i]]["tolerance"] for i in ys), default=DEFAULT_TOLERANCE)
        ax.axvspan(1 - tol, 1 + tol, color="0.9")
        ax.axvline(1, color="0.5", lw=0.8)
        ax.scatter(xs, ys, c=["tab:red" if rs[points[i]]["status"] == "REGRESSION" else "tab:blue" for i in ys], s=18)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("this run / baseline", fontsize=8)
    axes[0][0].set_yticks(range(len(points)), points, fontsize=7)
    fig.suptitle(f"counts per unit against the baseline: {len(v.regressions)} regression(s)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)
