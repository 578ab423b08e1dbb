"""Shared table/figure plumbing: read benchmark rows, the papers' published values, write tables."""
from __future__ import annotations

import json
import math
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, Iterable

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


def oracle_dir() -> Path | None:
    """The Moses oracle's folder the notebooks read recorded figures from: ``$SMTBENCH_SHARED/oracles/moses-bible-dev``
    if SMTBENCH_SHARED is set, else ``../shared/oracles/moses-bible-dev`` beside the checkout; None where it does
    not exist (a clone without ../shared: the reports then show no recorded figures)."""
    import os
    shared = os.environ.get("SMTBENCH_SHARED")
    path = (Path(shared) if shared else repo_root().parent / "shared") / "oracles" / "moses-bible-dev"
    return path if path.is_dir() else None


def read_rows(paths: Iterable[str | Path], experiment: str | tuple[str, ...] | None = None) -> pd.DataFrame:
    """Concatenate JSON-lines benchmark rows (one file per sweep point). Every row is a benchmark row (it names its
    ``experiment``, as ``benchutil.RowWriter`` writes it) and, where ``experiment`` is given, a row of that experiment
    (or one of them): a report given other rows says so in one line instead of failing on a missing column."""
    want = (experiment,) if isinstance(experiment, str) else experiment
    paths = list(paths)
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.strip()
                if line:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise ValueError(f"{p}:{lineno}: not a JSON row ({exc.msg})") from exc
                    if not isinstance(row, dict):  # a list or a number made a frame with no named columns
                        raise ValueError(f"{p}:{lineno}: not a JSON row (a {type(row).__name__}, expected an object)")
                    got = row.get("experiment")
                    if not isinstance(got, str):
                        raise ValueError(f"{p}:{lineno}: not a benchmark row (no 'experiment' field: rows come from "
                                         "`smtbench bench <experiment>`)")
                    if want is not None and got not in want:
                        raise ValueError(f"{p}:{lineno}: a row of experiment {got!r}; this report reads rows of "
                                         + " or ".join(repr(w) for w in want))
                    rows.append(row)
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


def _wide(path: Path, by: str, who: str, table: str, prefix: str, what: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The long rows of ``path`` whose ``by`` is ``who`` and whose table is ``table``, and their values wide: one row
    per key, a column ``<prefix>_<metric>`` per metric (paper_values.csv and recorded_runs.csv share this shape)."""
    df = pd.read_csv(path)
    df = df[(df[by] == who) & (df.table == table)]
    if df.empty:
        raise KeyError(f"no {what} for {who} {table} in {path}")
    wide = df.pivot_table(index="key", columns="metric", values="value", aggfunc="first")
    wide.columns = [f"{prefix}_{c}" for c in wide.columns]
    return df, wide


def paper_values(paper: str, table: str) -> pd.DataFrame:
    """The published numbers of one table, wide: one row per key, columns paper_<metric>, citation."""
    df, wide = _wide(PAPER_VALUES, "paper", paper, table, "paper", "published values")
    cites = df.groupby("key")["citation"].first().rename("paper_citation")
    return wide.join(cites).reset_index()


RECORDED_RUNS = ROOT / "resources" / "recorded_runs.csv"


def recorded_values(source: str, table: str) -> pd.DataFrame:
    """Figures recorded elsewhere (another run, another machine: e.g. the Moses oracle's runs-quiet.tsv), one row per
    key, columns recorded_<metric>, ``recorded`` (the label: "recorded, <machine/date>") and recorded_citation. A
    table shows them beside its own rows, labelled, and never divides by them (no ratio: issue 40)."""
    df, wide = _wide(RECORDED_RUNS, "source", source, table, "recorded", "recorded values")
    first = df.groupby("key")[["recorded", "citation"]].first().rename(columns={"citation": "recorded_citation"})
    return wide.join(first).reset_index()


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


# ----------------------------------------------------------------------------------------------- declared ratios
# Every ratio a report prints is declared (issue 40): its column, what its numerator and denominator rows are, and the
# row fields both must share - the run (`run_id`, set by smtbench.protocol's repeat loop on every row it times), the
# thread count and the clock. The report computes it only through check_like/ratio_pairs, which refuse a ratio whose
# two sides differ in any of them. A recorded figure (another run, another machine) is shown labelled "recorded, ..."
# and never divided by. tests/test_ratios.py scans the committed tables for ratio columns nobody declared.

SAME = ("run_id", "threads", "clock")
#: the value a row that lacks the field is taken to have (rows of a single-threaded, wall-clock point often omit them)
FIELD_DEFAULTS = {"threads": 1, "clock": "wall"}
UNRECORDED = "unrecorded"


@dataclass(frozen=True)
class Ratio:
    """One ratio a table prints: ``name`` (its column; ``<name>_paired`` / ``_ci_low`` / ``_ci_high`` / ``_median``
    / ``_min`` / ``_max`` are its interval's columns), ``num`` / ``den`` (which rows: in words, for the notes and the
    error), ``same`` (the fields both sides must share) and ``blank`` (those of ``same`` where a difference is by
    design - e.g. a multi-thread row of ours against a one-thread peer - and leaves the row without the ratio, its
    cell empty, instead of refusing the table)."""
    name: str
    num: str
    den: str
    same: tuple[str, ...] = SAME
    blank: tuple[str, ...] = ()


DECLARED: dict[str, tuple[Ratio, ...]] = {}


def declare(table: str, *ratios: Ratio) -> tuple[Ratio, ...]:
    """Register the ratios table ``table`` (its file stem; also stems ``table_<suffix>``) prints; returns them."""
    DECLARED[table] = tuple(DECLARED.get(table, ())) + ratios
    return ratios


def declared() -> dict[str, tuple[Ratio, ...]]:
    """Every report module's declarations (imports the report modules)."""
    import importlib
    import pkgutil

    from .. import report
    for m in pkgutil.iter_modules(report.__path__):
        importlib.import_module(f"{report.__name__}.{m.name}")
    return DECLARED


def _values(rows: pd.DataFrame, key: str) -> set[str]:
    default = FIELD_DEFAULTS.get(key, UNRECORDED)
    if key not in rows.columns:
        return {str(default)}
    return {str(default) if v is None or v != v else str(int(v)) if isinstance(v, float) and v.is_integer()
            else str(v) for v in rows[key]}


def unlike(ratio: Ratio, num: pd.DataFrame, den: pd.DataFrame) -> dict[str, tuple[list[str], list[str]]]:
    """The fields of ``ratio.same`` whose values differ between the numerator's and the denominator's rows (a
    field one side leaves unrecorded counts as differing)."""
    out = {}
    for key in ratio.same:
        a, b = _values(num, key), _values(den, key)
        if a != b or (key != "run_id" and len(a) > 1):  # a run's repeats may span run ids only alike on both sides
            out[key] = (sorted(a), sorted(b))
    return out


def check_like(ratio: Ratio, num: pd.DataFrame, den: pd.DataFrame, where: str = "") -> bool:
    """True when the ratio may be printed; False when it may not by design (a difference in ``ratio.blank``, or a
    numerator timed outside the run's repeats: no run id): the row carries no ratio. Any other difference raises
    UnlikeRatio (one line). Rows without run ids on both sides (rows written before the repeat protocol) pass."""
    from ..errors import UnlikeRatio

    if num.empty or den.empty:
        return False
    bad = unlike(ratio, num, den)
    if not bad:
        return True
    if all(k in ratio.blank or (k == "run_id" and UNRECORDED in a) for k, (a, _) in bad.items()):
        return False
    what = "; ".join(f"{k} {'/'.join(a)} vs {'/'.join(b)}" for k, (a, b) in bad.items())
    raise UnlikeRatio(f"{where + ': ' if where else ''}ratio {ratio.name} refused: its numerator ({ratio.num}) and "
                      f"denominator ({ratio.den}) differ in {what} (a ratio divides rows of one run, one clock, one "
                      f"thread count)")


def ratio_pairs(ratio: Ratio, rows: pd.DataFrame, num: pd.Series, den: pd.Series, value: str,
                higher_is_better: bool = False, where: str = "") -> list[float] | None:
    """The per-repeat paired ratios (smtbench.protocol.paired_ratios) of ``rows[num]`` over ``rows[den]``, after
    check_like; None where the row carries no ratio by design."""
    from ..protocol import kept, paired_ratios

    if not check_like(ratio, kept(rows[num]), kept(rows[den]), where):
        return None
    return paired_ratios(rows, num, den, value=value, higher_is_better=higher_is_better)


#: ratio columns, as the scan of tables/*.csv recognizes them (after the interval's suffixes are taken off); paper_*
#: columns are the papers' own figures and not ours
RATIO_COLUMN = r"(speedup|(^|_)vs(_|$)|(^|_)ratio(_|$)|_over_)"
RATIO_SUFFIXES = ("_paired", "_ci_low", "_ci_high", "_median", "_min", "_max")


def ratio_columns_of(columns: Iterable[str]) -> set[str]:
    """The ratio columns among a table's ``columns`` (their base names, interval suffixes removed)."""
    import re
    out = set()
    for c in columns:
        if c.startswith("paper_"):
            continue
        base = c
        for s in RATIO_SUFFIXES:
            if base.endswith(s):
                base = base[: -len(s)]
                break
        if re.search(RATIO_COLUMN, base):
            out.add(base)
    return out


def declared_for(stem: str, table: dict[str, tuple[Ratio, ...]] | None = None) -> set[str]:
    """The ratio columns declared for a table file stem (``mokry_table3_4_trained-mira`` -> ``mokry_table3_4``)."""
    table = declared() if table is None else table
    names: set[str] = set()
    for key, ratios in table.items():
        if stem == key or stem.startswith(key + "_"):
            names |= {r.name for r in ratios}
    return names


# ---- counts beside the time ratios (issue 42) ------------------------------------------------------------------

#: the columns a headline table gains from `smtbench count`: the fixed points counted (ours / the peer's), their
#: unit, and per unit the instructions and the simulated LL misses of each side (callgrind, pinned geometry)
COUNT_COLUMNS = ["count_points", "count_unit", "instr_ours", "instr_peer", "ll_miss_ours", "ll_miss_peer"]
COUNT_NOTE = ("Counts (issue 42, `smtbench count`, CONTRIBUTING 'Counts'): `count_points` names the fixed points "
              "counted under callgrind with pinned caches (D1 32 KiB, LL 8 MiB), ours / the peer's, on the same input "
              "(their `what` in results/counts/counts.csv says which: a fixed small point, not this row's sweep); "
              "`instr_*` instructions and `ll_miss_*` simulated last-level misses per `count_unit`, from the portable "
              "build. Counts do not move with the machine's memory regime; the time ratios do.")


def read_counts(path: str | Path | None) -> dict[tuple[str, str], float]:
    """{(point, metric): per unit} of a counts table (`smtbench count --csv`); None: no counts (an empty dict)."""
    if not path:
        return {}
    from ..counts import read_table

    return {k: float(v["per_unit"]) for k, v in read_table(path).items()}


def check_counts(path: str | Path | None) -> None:
    """A report's ``--counts`` table read once before the report writes anything: a missing or malformed table is a
    one-line error (CountError) that leaves no output behind, not even an empty folder."""
    read_counts(path)


def unit_of(path: str | Path | None, point: str) -> str | None:
    if not path:
        return None
    from ..counts import read_table

    return next((v["unit"] for (p, _), v in read_table(path).items() if p == point), None)


def with_counts(df: pd.DataFrame, counts_csv: str | Path | None,
                points_of: Callable[[pd.Series], tuple[str, str | None] | None],
                after: str | None = None) -> pd.DataFrame:
    """``df`` with :data:`COUNT_COLUMNS` (after column ``after``, else at the end) where ``counts_csv`` is given:
    ``points_of(row)`` names the row's (our point, the peer's point or None), or None for a row with no count.
    Without a counts table the frame is returned unchanged (tables of runs without counts render as before)."""
    if not counts_csv:
        return df
    counts = read_counts(counts_csv)
    out = df.copy()
    cols: dict[str, list] = {c: [] for c in COUNT_COLUMNS}
    for _, row in out.iterrows():
        pts = points_of(row)
        ours, peer = pts if pts else (None, None)
        have = ours is not None and (ours, "ir") in counts
        have_peer = peer is not None and (peer, "ir") in counts
        cols["count_points"].append(f"{ours} / {peer if have_peer else '-'}" if have else None)
        cols["count_unit"].append(unit_of(counts_csv, ours) if have else None)
        cols["instr_ours"].append(counts[(ours, "ir")] if have else None)
        cols["instr_peer"].append(counts[(peer, "ir")] if have_peer and have else None)
        cols["ll_miss_ours"].append(counts.get((ours, "ll_miss")) if have else None)
        cols["ll_miss_peer"].append(counts.get((peer, "ll_miss")) if have_peer and have else None)
    at = (list(out.columns).index(after) + 1) if after in out.columns else len(out.columns)
    for i, c in enumerate(COUNT_COLUMNS):
        out.insert(at + i, c, pd.Series(cols[c], index=out.index, dtype=object if c in ("count_points", "count_unit")
                                         else "float64"))
    return out

