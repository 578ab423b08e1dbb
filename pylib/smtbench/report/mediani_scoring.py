"""Mediani et al. (2012), parallel phrase scoring: Table 1 (time per system on the largest corpus), Table 2 (BLEU
with Moses' table and with ours), Table 3 (time against corpus size), Table 4 (the distributed form), the end-to-end
table (mediani_e2e: a run of its own, rule mediani_e2e_bench) and a scaling figure, from `bench mediani_scoring` /
`bench mediani_scoring_bleu` rows.

Two live Moses baselines, each named by what it runs. *Core*: "Moses" = Moses' own `score` (per direction) and
`consolidate` with GNU sort between, on plain files (`tm score-moses`: sort -> score -> score --Inverse -> sort ->
consolidate), beside ours ("Multithreaded" = `smtbench tm score`, C, external memory) on the same plain files.
*End to end*: "Moses, end to end" = `train-model.perl --first-step 4 --last-step 7 --reordering
msd-bidirectional-fe` (lexical tables, extract-parallel.perl with orientations, score-parallel.perl, consolidate,
lexical-reordering-score, gzip or pigz at every step, `--cores` = ours) on the corpus and alignment, beside "ours, end
to end" = `tm extract --phrase-table --reordering-table --threads N` (one process, no extract file; rows from before
it: `tm extract --reordering-table` + `tm score --threads N`) writing the same phrase and reordering tables
(table mediani_e2e only);
"sort pipeline" = `tm score-sort` (GNU sort + a single-threaded streaming scorer and consolidate, in C: the Moses
design with our code); "in-memory" = `tm score-memory` (pandas). Times are the minimum over repeats (median
beside them). Where Moses' programs are not built its rows read moses_peer.NOT_BUILT."""
from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import pandas as pd

from ..moses_peer import NOT_BUILT
from ..protocol import kept
from .common import Ratio, add_interval, declare, paper_values, ratio_pairs
from . import metrics
from ..experiments.frame import Verb, arg, counts_arg

POINT = ["system", "fraction", "threads", "memory", "partitions"]
TIMED = ["ours", "memory", "sort", "moses", "distributed", "moses-e2e", "ours-e2e"]
#: what each row runs (the tables' `runs` column)
RUNS = {"moses": "core: sort -> score -> score --Inverse -> sort -> consolidate (plain files)",
        "ours": "core: tm score (plain files)",
        "sort": "core: GNU sort + our single-threaded scorer + consolidate (plain files)",
        "memory": "core: pandas group-by (plain files)",
        "moses-e2e": "end to end: train-model.perl --first-step 4 --last-step 7 (lex, extract-parallel.perl, "
                     "score-parallel.perl, consolidate, lexical-reordering-score; .gz)",
        "ours-e2e": "end to end: tm extract --reordering-table + tm score (lex, extract, reordering table, score; "
                    ".gz)"}
#: the status of end-to-end rows where the rows hold none (rows from before the end-to-end baseline, or a sweep run
#: without its two systems: the rule mediani_e2e_bench runs them on their own)
E2E_NOT_IN_ROWS = ("not in these rows (bench mediani_scoring --systems moses-e2e,ours-e2e: the rule "
                   "mediani_e2e_bench)")
#: the end-to-end systems and their rows' names (table mediani_e2e)
E2E = ("moses-e2e", "ours-e2e")


def moses_status(rows: pd.DataFrame, system: str = "moses") -> str:
    """'measured', NOT_BUILT (rows say so), or 'not run' (the sweep had no such Moses system)."""
    m = rows[rows.system == system] if "system" in rows else rows.iloc[:0]
    if m.empty:
        return "not run"
    if "status" in m and m.status.notna().all():
        return str(m.status.iloc[0])
    return "measured"


def moses_allocator(rows: pd.DataFrame) -> str:
    """How Moses' score and consolidate were built: their malloc, as the run read it from the binaries
    (moses_peer.allocator_of, the rows' ``<program>_allocator``); rows from before that say so."""
    from .moses_decode import UNRECORDED_ALLOCATOR
    found = []
    for prog in ("score", "consolidate"):
        col = f"{prog}_allocator"
        v = rows[col].dropna() if col in rows else pd.Series(dtype=object)
        if len(v):
            found.append(f"{prog}: {v.iloc[0]}")
    return "; ".join(found) or UNRECORDED_ALLOCATOR


def moses_checks(rows: pd.DataFrame) -> pd.DataFrame:
    """Per fraction: how Moses' table compares with ours (from the first repeat's full comparison)."""
    cols = ["pairs_ours", "pairs_moses", "only_ours", "only_moses", "value_mismatches", "alignment_mismatches",
            "count_mismatches"]
    m = rows[(rows.system == "moses")]
    if m.empty or "pairs_moses" not in m:
        return pd.DataFrame(columns=["fraction", "check", *cols])
    m = m[m.pairs_moses.notna()]
    return m.groupby("fraction").agg(check=("check", "first"), **{c: (c, "first") for c in cols}).reset_index()


def _rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that count (retaken attempts left out), memory as text, and `t`: the time a ratio compares (the critical
    path for the distributed form, the wall time otherwise)."""
    r = kept(rows).copy()
    r["memory"] = r["memory"].fillna("").astype(str)
    t = r["seconds"]
    if "s_critical_path" in r:
        t = r["s_critical_path"].where(r["system"] == "distributed", t)
    r["t"] = t
    return r


def _is(rows: pd.DataFrame, pt) -> pd.Series:
    """The rows of one per_point() point."""
    m = pd.Series(True, index=rows.index)
    for c in POINT:
        v = pt[c]
        m &= rows[c].isna() if v is None or (isinstance(v, float) and v != v) else rows[c] == v
    return m


# the declarations (report.common.declare). Against Moses: rows of one run, clock and thread count. Against our own
# sort pipeline (single-threaded, the Moses design in our code) and our own 1-thread run: a design / thread-scaling
# ratio of ours, so threads may differ, run and clock may not. Table 4's ratios divide by a critical path that is
# measured only for one partition (or parts run side by side on as many cores); otherwise it is a projection
# (partition + slowest part + merge, parts timed one after another) and the row carries no ratio.
VS_MOSES = Ratio("speedup_vs_moses", num="the row's system", den="Moses' score + consolidate, the same threads")
VS_MOSES_1T = Ratio("speedup_vs_moses_1t", num="ours, 1 thread", den="Moses, 1 thread")
VS_MOSES_E2E = Ratio("speedup_vs_moses_e2e",
                     num="ours end to end (the steps of the row's `runs`, --threads N)",
                     den="Moses end to end (train-model.perl steps 4-7, --cores N)")
VS_SORT = Ratio("speedup_vs_sort", num="the row's system", den="our sort pipeline (1 thread)", same=("run_id", "clock"))
THREADS = Ratio("thread_speedup", num="ours, most threads", den="ours, 1 thread", same=("run_id", "clock"))
VS_SINGLE = Ratio("vs_single_run", num="ours, one job, most threads", den="the distributed form's critical path",
                  same=("run_id", "clock"))
VS_MOSES_REORDER = Ratio("speedup_vs_moses_reorder", num="ours, tm reorder, 1 thread",
                         den="Moses' lexical-reordering-score (one thread: it has no threads option)")
declare("mediani_reorder", VS_MOSES_REORDER)
declare("mediani_table1", VS_MOSES, VS_SORT)
declare("mediani_table3", VS_MOSES, VS_MOSES_1T, VS_SORT, THREADS)
declare("mediani_e2e", VS_MOSES_E2E)
declare("mediani_table4", VS_MOSES, VS_SORT, VS_SINGLE)


REORDER_RUNS = {"moses-reorder": "lexical-reordering-score extract.o.sorted.gz 0.5 ... --model \"wbe msd "
                                  "wbe-msd-bidirectional-fe\" (train-model.perl's step 7)",
                "ours-reorder": "smtbench tm reorder --orientations extract.o.sorted.gz --threads N"}


def reorder_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The reordering table alone (`bench mediani_scoring_reorder`): per system and thread count the minimum and
    median seconds, peak RSS, and ours at 1 thread against Moses' program (one thread) with its interval; a
    multi-thread row of ours carries no ratio (Moses' program has no threads option)."""
    r = kept(rows)
    moses_missing = "status" in r and r[r.system == "moses-reorder"].status.notna().any()
    timed = r[r.seconds.notna()] if "seconds" in r else r.iloc[:0]
    out, per = [], []
    mo = timed[timed.system == "moses-reorder"]
    for (system, threads), g in timed.groupby(["system", "threads"], sort=False):
        rec = dict(system=system, runs=REORDER_RUNS.get(system, ""), threads=int(threads),
                   seconds_min=g.seconds.min(), seconds_median=g.seconds.median(),
                   peak_rss_mib=g.peak_rss_bytes.max() / 2**20, lines=int(g.lines.iloc[0]),
                   pairs=int(r[r.pairs.notna()].pairs.iloc[0]) if "pairs" in r and r.pairs.notna().any() else None,
                   check="; ".join(sorted({c for c in r.check.dropna() if c.startswith("ours and Moses'")})) or
                   "not compared (Moses' program not run)", speedup_vs_moses_reorder=float("nan"))
        pair: list[float] | None = []
        if system == "ours-reorder" and threads == 1 and len(mo):
            rec["speedup_vs_moses_reorder"] = mo.seconds.min() / g.seconds.min()
            pair = ratio_pairs(VS_MOSES_REORDER, r, (r.system == system) & (r.threads == threads),
                               r.system == "moses-reorder", value="seconds", where="mediani_reorder")
        out.append(rec)
        per.append(pair)
    if moses_missing:
        out.append(dict(system="moses-reorder", runs=REORDER_RUNS["moses-reorder"], threads=1,
                        check=NOT_BUILT, speedup_vs_moses_reorder=float("nan")))
        per.append([])
    df = pd.DataFrame(out)
    return _interval(df, VS_MOSES_REORDER, per)


def _ratios(rows: pd.DataFrame, fast, slow, ratio: Ratio) -> list[float] | None:
    """Per-repeat time(slow) / time(fast) of two points (empty when either is missing; None: the ratio may not be
    printed for these rows, report.common.check_like; an unlike pair is refused there)."""
    if fast is None or slow is None:
        return []
    r = _rows(rows)
    return ratio_pairs(ratio, r, _is(r, fast), _is(r, slow), value="t", where=f"mediani_scoring, {fast['system']} "
                       f"x{fast['fraction']:g} {fast['threads']:g}t / {slow['system']} {slow['threads']:g}t")


def _interval(df: pd.DataFrame, ratio: Ratio, per: list[list[float] | None]) -> pd.DataFrame:
    """The ratio's interval columns; a row whose pair check_like refused by design gets no ratio at all."""
    if ratio.name in df:
        df[ratio.name] = [v if r is not None else float("nan") for v, r in zip(df[ratio.name], per)]
    return add_interval(df, ratio.name, [r or [] for r in per])


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    rows = kept(rows)
    rows = rows[rows.system.isin(TIMED)].copy()
    if "status" in rows:
        rows = rows[rows.status.isna()]
    rows["memory"] = rows["memory"].fillna("").astype(str)
    agg = dict(seconds_min=("seconds", "min"), seconds_median=("seconds", "median"),
               peak_rss_mib=("peak_rss_bytes", lambda x: x.max() / 2**20), lines=("lines", "first"),
               repeats=("seconds", "count"))
    if "s_critical_path" in rows:
        agg["critical_path_s"] = ("s_critical_path", "min")
    return rows.groupby(POINT, dropna=False).agg(**agg).reset_index()


def _best(pts: pd.DataFrame, system: str, fraction: float, threads: int | None = None) -> pd.Series | None:
    q = pts[(pts.system == system) & (pts.fraction == fraction)]
    if threads is not None:
        q = q[q.threads == threads]
    if q.empty:
        return None
    return q.loc[q.seconds_min.idxmin()]


def table1(rows: pd.DataFrame) -> pd.DataFrame:
    """Scoring time per system on the largest corpus measured (the paper: WMT2011, 13.8M pairs). "Moses" is the
    live Moses at the most threads (train-model.perl's concurrency), "Moses, 1 thread" one step at a time;
    speedup_vs_moses divides Moses' time at the row's thread count by the row's (same run)."""
    pts = per_point(rows)
    frac = pts[pts.system.isin(["ours", "sort", "moses"])].fraction.max()
    tmax = int(pts[pts.system.isin(["ours", "moses"])].threads.max()) if len(pts) else 1
    status = moses_status(rows)
    out = []
    per_row: list[list[float] | None] = []
    per_moses: list[list[float] | None] = []
    sort = _best(pts, "sort", frac)
    checks = moses_checks(rows)
    check = checks.loc[checks.fraction == frac, "check"]
    order = [("moses", tmax), ("moses", 1), ("sort", None), ("memory", None)] + \
        [("ours", int(t)) for t in sorted(pts[pts.system == "ours"].threads.unique())]
    seen = set()
    for system, threads in order:
        if (system, threads) in seen:
            continue
        seen.add((system, threads))
        if system == "moses":
            name = "Moses" if threads == tmax else f"Moses, {threads} thread{'s' if threads > 1 else ''}"
        elif system == "sort":
            name = "sort pipeline (Moses-style, C)"
        elif system == "memory":
            name = "in-memory (pandas)"
        elif threads == tmax:
            name = "Multithreaded"
        else:
            name = f"ours, {threads} thread{'s' if threads > 1 else ''}"
        r = _best(pts, system, frac, threads)
        if r is None:
            if system == "moses" and status != "not run":
                out.append(dict(key=name, runs=RUNS[system], fraction=frac, threads=threads, status=status))
                per_row.append([])
                per_moses.append([])
            continue
        moses = _best(pts, "moses", frac, int(r.threads))
        out.append(dict(key=name, runs=RUNS[system], fraction=frac, corpus=corpus_label(rows, frac),
                        lines=int(r.lines), threads=int(r.threads),
                        memory=r.memory,
                        seconds_min=r.seconds_min, seconds_median=r.seconds_median, peak_rss_mib=r.peak_rss_mib,
                        speedup_vs_moses=(moses.seconds_min / r.seconds_min) if moses is not None else float("nan"),
                        speedup_vs_sort=(sort.seconds_min / r.seconds_min) if sort is not None else float("nan"),
                        status="measured",
                        table_check=(check.iloc[0] if system == "moses" and len(check) else ""),
                        allocator=(moses_allocator(rows) if system == "moses" else "")))
        per_row.append(_ratios(rows, r, sort, VS_SORT))
        per_moses.append(_ratios(rows, r, moses, VS_MOSES))
    df = _interval(_interval(pd.DataFrame(out), VS_SORT, per_row), VS_MOSES, per_moses)
    pv = paper_values("mediani2012", "table1")
    moses = float(pv.loc[pv.key == "Moses", "paper_hours"].iloc[0])
    pv["paper_speedup_vs_moses"] = moses / pv["paper_hours"]
    df = df.merge(pv, on="key", how="outer")
    df["n_repeats"] = df["n_repeats"].astype("Int64")
    return df


def e2e_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The end-to-end pair (table mediani_e2e): Moses' train-model.perl steps 4-7 and ours (tm extract + tm score)
    from the same corpus and alignment, full corpus, the most threads, with ours' ratio to Moses' and its interval
    (rows of one run: the rule mediani_e2e_bench's, or the end-to-end rows of an older whole sweep); rows holding
    neither give both rows with E2E_NOT_IN_ROWS and no ratio."""
    rows = rows[rows.system.isin(E2E)] if "system" in rows else rows
    out, per = _e2e_rows(rows, per_point(rows) if len(rows) else pd.DataFrame(columns=POINT + ["seconds_min"]))
    df = pd.DataFrame(out)
    if "speedup_vs_moses_e2e" not in df:
        df["speedup_vs_moses_e2e"] = float("nan")
    return _interval(df, VS_MOSES_E2E, per)


def _e2e_rows(rows: pd.DataFrame, pts: pd.DataFrame) -> tuple[list[dict], list[list[float] | None]]:
    """The end-to-end rows (Moses', then ours, full corpus, the most threads) and the per-repeat ratios of ours to
    Moses'; rows without the end-to-end systems get both rows with E2E_NOT_IN_ROWS and no ratio."""
    e = pts[pts.system.isin(["moses-e2e", "ours-e2e"])]
    names = {"moses-e2e": "Moses, end to end", "ours-e2e": "ours, end to end"}
    tmax = int(e.threads.max()) if len(e) else None
    moses = _best(pts, "moses-e2e", 1.0, tmax) if tmax else None
    ours = _best(pts, "ours-e2e", 1.0, tmax) if tmax else None
    e2e_rows = rows[rows.system.isin(["moses-e2e", "ours-e2e"])] if "system" in rows else rows.iloc[:0]
    out, per = [], []
    for system, r in (("moses-e2e", moses), ("ours-e2e", ours)):
        if r is None:
            st = moses_status(rows, system)
            out.append(dict(key=names[system], runs=RUNS[system], fraction=1.0,
                            status=E2E_NOT_IN_ROWS if e2e_rows.empty else st if st != "measured" else "not run"))
            per.append([])
            continue
        x = e2e_rows[(e2e_rows.system == system) & e2e_rows.seconds.notna()] if "seconds" in e2e_rows else e2e_rows
        runs = RUNS[system]
        if system == "ours-e2e" and "steps" in x and x["steps"].notna().any():  # what the rows ran (it changed)
            runs = f"end to end: {x['steps'].dropna().iloc[-1]} (lex, extract, reordering table, score; .gz)"
        rec = dict(key=names[system], runs=runs, fraction=1.0, corpus="corpus", lines=int(r.lines),
                   threads=int(r.threads),
                   memory=r.memory, seconds_min=r.seconds_min, seconds_median=r.seconds_median,
                   peak_rss_mib=r.peak_rss_mib, status="measured",
                   table_check=_e2e_check(e2e_rows), allocator=(moses_allocator(rows) if system == "moses-e2e" else ""))
        if system == "moses-e2e":
            rec["pigz"] = str(x["pigz"].dropna().iloc[0]) if "pigz" in x and x["pigz"].notna().any() else ""
            rec["speedup_vs_moses_e2e"] = float("nan")
            per.append(None)
        else:
            rec["pigz"] = (f"ours: {x['deflate'].dropna().iloc[0]}" if "deflate" in x and x["deflate"].notna().any()
                           else "")  # our deflate (the column says what compressed and inflated each side's .gz)
            rec["speedup_vs_moses_e2e"] = moses.seconds_min / r.seconds_min if moses is not None else float("nan")
            per.append(_ratios(rows, r, moses, VS_MOSES_E2E))
        out.append(rec)
    return out, per


def e2e_notes(rows: pd.DataFrame) -> str:
    """The notes of table mediani_e2e: what each side runs, the machine, what was checked."""
    e = rows[rows.system.isin(E2E)] if "system" in rows else rows.iloc[:0]
    if e.empty:
        return f"Both rows: {E2E_NOT_IN_ROWS}."
    r0 = e.iloc[0]
    core = e["same_bytes_as_core"].dropna() if "same_bytes_as_core" in e else pd.Series(dtype=object)
    return (f"From the same corpus and symmetrised alignment to phrase-table.gz and "
            f"reordering-table.wbe-msd-bidirectional-fe.gz, full corpus, the most threads of the run "
            f"({moses_status(rows, 'moses-e2e')} for Moses). Moses = `train-model.perl --first-step 4 --last-step 7 "
            f"--reordering msd-bidirectional-fe` (lexical tables, extract and orientations via extract-parallel.perl, "
            f"score via score-parallel.perl, consolidate, lexical-reordering-score; .gz at every step through pigz "
            f"where installed, else gzip: column `pigz`, which for ours names our deflate, ISA-L's through the isal "
            f"package, every .gz read and written in-process); --cores and --sort-parallel = our threads, "
            f"--sort-buffer-size = the sort budget. Ours = {_ours_e2e_steps(e)}. Both pairs of "
            f"tables compared pair by pair in the first repeat (table_check: pairs, alignments, counts, the scores "
            f"to printed precision)"
            + (f"; our phrase table equal byte for byte to our core table of the corpus ({core.iloc[0]})"
               if len(core) else "") +
            f". Seconds: minima and medians over repeats, each a whole child process (interpreter start included "
            f"for ours), repeats interleaved, on {r0.get('machine_cpu', '')}, {r0.get('machine_cores', '')} cores. "
            f"The ratio (declared: smtbench.report.mediani_scoring.VS_MOSES_E2E) divides Moses' seconds by ours, "
            f"same run and threads.")


def _ours_e2e_steps(e: pd.DataFrame) -> str:
    """Our end-to-end steps as the rows ran them: one process (tm extract --phrase-table) or two."""
    o = e[e.system == "ours-e2e"]
    made = o.extract_file.dropna() if "extract_file" in o else o.iloc[:0]
    if len(made) and str(made.iloc[-1]).startswith("none"):
        return (f"`tm extract --phrase-table --reordering-table --threads N`, one process: a first pass counts the "
                f"lexical tables and hands the orientations to the reordering counter, a second hands each phrase pair "
                f"to the scorer as a record (no extract file){_ours_e2e_detail(e)}")
    return (f"`tm extract --reordering-table` (the reordering table counted as the orientations are "
            f"made{_ours_e2e_detail(e)}) then `tm score --threads N`")


def _ours_e2e_detail(e: pd.DataFrame) -> str:
    """What the rows of ours end to end recorded of their extraction (rows from before it say nothing)."""
    o = e[e.system == "ours-e2e"]
    out = []
    if "lexical_tables" in o and o.lexical_tables.notna().any():
        out.append(f"the lexical tables {o.lexical_tables.dropna().iloc[0]}")
    if "extract_file" in o and o.extract_file.notna().any():
        if not str(o.extract_file.dropna().iloc[-1]).startswith("none"):
            out.append(f"its extract file written {o.extract_file.dropna().iloc[0]} (--uncompressed): our scorer's "
                       f"input, which nobody keeps")
    elif "extract_gz_level" in o and o.extract_gz_level.notna().any():
        out.append(f"its extract file gzipped at zlib level {int(o.extract_gz_level.dropna().iloc[0])}: our scorer's "
                   f"input, which nobody keeps")
    if "tables_gz_level" in o and o.tables_gz_level.notna().any():
        out.append(f"both tables gzipped at zlib level {int(o.tables_gz_level.dropna().iloc[0])} (ISA-L's nearest; "
                   f"Moses' gzip/pigz: 6, smaller files)")
    return "".join(f"; {x}" for x in out)


def _e2e_check(e2e_rows: pd.DataFrame) -> str:
    """The end-to-end tables' pair-by-pair comparison, as the run's first repeat recorded it."""
    if "check" not in e2e_rows:
        return ""
    c = e2e_rows["check"].dropna()
    c = c[c.str.startswith("end-to-end tables")]
    return str(c.iloc[0]) if len(c) else ""


def corpus_label(rows: pd.DataFrame, frac: float) -> str:
    """What a fraction of the corpus is: the first share of its lines, the corpus, or the corpus replicated k times
    (the same distinct pairs: our scorer's ``pairs`` at that fraction, where the rows record it)."""
    if frac < 1:
        return f"first {frac:g} of the corpus"
    if frac == 1:
        return "corpus"
    o = rows[(rows.system == "ours") & (rows.fraction == frac)] if "pairs" in rows else rows.iloc[:0]
    pairs = o["pairs"].dropna() if len(o) else pd.Series(dtype=float)
    distinct = f": {pairs.iloc[0] / 1e6:.1f} M distinct pairs" if len(pairs) else ""
    return f"corpus x{frac:g} (replicated{distinct})"


def table2(bleu_rows: pd.DataFrame) -> pd.DataFrame:
    """BLEU of our cube decoder with the phrase table from Moses' scorer and with ours (`bench mediani_scoring_bleu`
    rows): identical tables give identical translations, so identical BLEU; the output digests show it."""
    out = []
    for r in bleu_rows.to_dict("records"):
        key = {"moses": "Moses", "ours": "Parallel scoring"}[r["table"]]
        rec = dict(key=key, table=r["table"], scorer=r.get("scorer", ""),
                   status=r.get("status") if isinstance(r.get("status"), str) else "measured")
        for c in ("sentences", "pop_limit", "stack_size", "bleu", "mean_model_score", "output_sha", "pairs",
                  "table_check"):
            if c in r and not (isinstance(r[c], float) and pd.isna(r[c])):
                rec[c] = r[c]
        out.append(rec)
    df = pd.DataFrame(out)
    if "output_sha" in df and df.output_sha.notna().sum() == 2:
        df["same_output_as_ours"] = df.output_sha == df.loc[df.table == "ours", "output_sha"].iloc[0]
    pv = paper_values("mediani2012", "table2")
    return df.merge(pv, on="key", how="outer")


#: Table 3's fixed count points (smtbench.counts): our scoring core and Moses' score + consolidate on one small
#: extract (the oracle's first aligned sentence pairs), shown on the full corpus' row
COUNT_POINTS = {1.0: ("score-t1", "moses-score")}


def with_counts(table: pd.DataFrame, counts_csv: str | None) -> pd.DataFrame:
    """Table 3 with the count columns beside the ratio to Moses (:func:`common.with_counts`)."""
    from .common import with_counts as _with_counts

    return _with_counts(table, counts_csv, lambda r: COUNT_POINTS.get(float(r["fraction"])),
                        after="speedup_vs_moses_ci_high")


def table3(rows: pd.DataFrame) -> pd.DataFrame:
    """Scoring time against corpus size: Moses (1 and most threads), the sort pipeline, in-memory, ours at 1 and
    at most threads. The paper's two corpora (EPPS+NC, then +UN) sit beside our full corpus and our x4 corpus."""
    pts = per_point(rows)
    tmax = int(pts[pts.system == "ours"].threads.max())
    status = moses_status(rows)
    out = []
    vs_sort: list[list[float] | None] = []
    vs_1t: list[list[float] | None] = []
    vs_moses: list[list[float] | None] = []
    vs_moses_1t: list[list[float] | None] = []
    for frac in sorted(pts[~pts.system.isin(["distributed", "moses-e2e", "ours-e2e"])].fraction.unique()):
        rec = dict(fraction=frac, corpus=corpus_label(rows, frac))
        vs_sort.append(_ratios(rows, _best(pts, "ours", frac, tmax), _best(pts, "sort", frac), VS_SORT))
        vs_1t.append(_ratios(rows, _best(pts, "ours", frac, tmax), _best(pts, "ours", frac, 1), THREADS))
        vs_moses.append(_ratios(rows, _best(pts, "ours", frac, tmax), _best(pts, "moses", frac, tmax), VS_MOSES))
        vs_moses_1t.append(_ratios(rows, _best(pts, "ours", frac, 1), _best(pts, "moses", frac, 1), VS_MOSES_1T))
        for name, system, th in [("moses_1t", "moses", 1), (f"moses_{tmax}t", "moses", tmax), ("sort", "sort", None),
                                 ("memory", "memory", None), ("ours_1t", "ours", 1), (f"ours_{tmax}t", "ours", tmax)]:
            r = _best(pts, system, frac, th)
            rec[f"{name}_s"] = r.seconds_min if r is not None else float("nan")
            if r is not None:
                rec["lines"] = int(r.lines)
                if system in ("ours", "moses"):
                    rec[f"{name}_rss_mib"] = r.peak_rss_mib
        rec["moses"] = status
        rec["speedup_vs_moses"] = rec[f"moses_{tmax}t_s"] / rec[f"ours_{tmax}t_s"]
        rec["speedup_vs_moses_1t"] = rec["moses_1t_s"] / rec["ours_1t_s"]
        rec["speedup_vs_sort"] = rec["sort_s"] / rec[f"ours_{tmax}t_s"]
        rec["thread_speedup"] = rec["ours_1t_s"] / rec[f"ours_{tmax}t_s"]
        out.append(rec)
    df = _interval(_interval(pd.DataFrame(out), VS_SORT, vs_sort), THREADS, vs_1t)
    if "speedup_vs_moses" in df:
        df = _interval(df, VS_MOSES, vs_moses)
        # speedup_vs_moses_1t keeps no interval columns of its own (as before), but its pair is checked alike
        df["speedup_vs_moses_1t"] = [v if r is not None else float("nan")
                                     for v, r in zip(df["speedup_vs_moses_1t"], vs_moses_1t)]
    checks = moses_checks(rows)
    if not checks.empty:
        df = df.merge(checks[["fraction", "check"]].rename(columns={"check": "moses_table_check"}), on="fraction",
                      how="left")
    df["key"] = df.fraction.map({1.0: "EPPS+NC", float(df.fraction.max()): "+UN"}).where(df.fraction >= 1)
    pv = paper_values("mediani2012", "table3")
    pv["paper_speedup"] = pv["paper_moses_hours"] / pv["paper_multithreaded_hours"]
    df = df.merge(pv, on="key", how="left")
    df = df.rename(columns={"key": "paper_corpus"})
    return df


def table4(rows: pd.DataFrame) -> pd.DataFrame:
    """The distributed form with K partitions: total time on one machine (partitions one after another) and
    the critical path (partition + slowest partition + merge: the time with one node per partition)."""
    pts = per_point(rows)
    d = pts[pts.system == "distributed"].sort_values("partitions")
    if d.empty:
        return pd.DataFrame()
    frac = float(d.fraction.iloc[0])
    sort = _best(pts, "sort", frac)
    ours = _best(pts, "ours", frac, int(d.threads.max()))
    out = d[["partitions", "fraction", "lines", "threads", "memory", "seconds_min", "critical_path_s",
             "peak_rss_mib"]].copy()
    out["speedup_vs_sort"] = sort.seconds_min / out.critical_path_s if sort is not None else float("nan")
    moses = _best(pts, "moses", frac, int(d.threads.max()))
    out["speedup_vs_moses"] = moses.seconds_min / out.critical_path_s if moses is not None else float("nan")
    out["vs_single_run"] = out.critical_path_s / ours.seconds_min if ours is not None else float("nan")
    dist = [d.loc[i] for i in out.index]
    measured = [_critical_path_measured(rows, x) for x in dist]
    out.insert(out.columns.get_loc("critical_path_s") + 1, "critical_path",
               [_critical_path_label(rows, x, m) for x, m in zip(dist, measured)])
    out = _interval(out, VS_SORT, [_ratios(rows, x, sort, VS_SORT) if m else None for x, m in zip(dist, measured)])
    out = _interval(out, VS_SINGLE, [_ratios(rows, ours, x, VS_SINGLE) if m else None
                                     for x, m in zip(dist, measured)])
    out = _interval(out, VS_MOSES, [_ratios(rows, x, moses, VS_MOSES) if m else None
                                    for x, m in zip(dist, measured)])
    out["key"] = "Distributed"
    pv = paper_values("mediani2012", "table4")
    moses = float(pv.loc[pv.key == "Moses", "paper_hours"].iloc[0])
    pv["paper_speedup_vs_moses"] = moses / pv["paper_hours"]
    pv = pv[pv.key == "Distributed"]
    return out.merge(pv, on="key", how="left").drop(columns=["key"])


def _critical_path_label(rows: pd.DataFrame, pt, measured: bool) -> str:
    k = int(pt["partitions"])
    if measured:
        return "measured" if k <= 1 else f"measured ({k} parts side by side)"
    cores = int(rows["machine_cores"].dropna().iloc[0]) if "machine_cores" in rows and rows["machine_cores"].notna().any() else 1
    why = (f"{k} parts > {cores} cores" if k > cores else "rows from before parts ran side by side")
    return f"projected ({why}: parts timed one after another, no ratio)"


def _critical_path_measured(rows: pd.DataFrame, pt) -> bool:
    """One partition (the critical path is the run's wall time), or the parts ran side by side (rows saying
    ``parts_parallel``) on no more parts than the machine's cores: measured; anything else is a projection."""
    k = int(pt["partitions"])
    if k <= 1:
        return True
    r = rows[_is(rows.assign(memory=rows["memory"].fillna("").astype(str)), pt)]
    cores = int(r["machine_cores"].iloc[0]) if "machine_cores" in r and len(r) else 1
    return bool("parts_parallel" in r and r["parts_parallel"].fillna(False).astype(bool).all() and k <= cores)


def fig_scaling(rows: pd.DataFrame):
    """Left: time against corpus size per system. Right: ours against threads, one line per budget."""
    pts = per_point(rows)
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for system, label in [("sort", "sort pipeline (Moses-style, C)"), ("memory", "in-memory (pandas)")]:
        q = pts[pts.system == system].sort_values("lines")
        if not q.empty:
            a.plot(q.lines, q.seconds_min, "o-", label=label)
    mo = pts[pts.system == "moses"]
    for t in sorted(mo.threads.unique()):
        q = mo[mo.threads == t].sort_values("lines")
        a.plot(q.lines, q.seconds_min, "^--", label=f"Moses score+consolidate, {t} thread{'s' if t > 1 else ''}")
    if moses_status(rows) == NOT_BUILT:
        a.text(0.02, 0.02, f"Moses: {NOT_BUILT}", transform=a.transAxes, fontsize=8)
    o = pts[pts.system == "ours"]
    for t in sorted(o.threads.unique()):
        q = o[o.threads == t].groupby("lines").seconds_min.min().reset_index()
        a.plot(q.lines, q.seconds_min, "s-", label=f"ours, {t} thread{'s' if t > 1 else ''}")
    a.set_xscale("log"); a.set_yscale("log")
    a.set_xlabel("extract lines"); a.set_ylabel("seconds (min over repeats)")
    a.set_title("Scoring time vs corpus size (Table 3 analogue)")
    a.legend(fontsize=8)
    big = o[o.fraction == o.fraction.max()]
    for m in sorted(big.memory.unique(), key=lambda x: float(x[:-1]) * {"K": 1, "M": 2**10, "G": 2**20}[x[-1]]):
        q = big[big.memory == m].sort_values("threads")
        b.plot(q.threads, q.seconds_min, "o-", label=f"budget {m}")
    b.set_xlabel("threads"); b.set_ylabel("seconds")
    b.set_title(f"Ours on the x{big.fraction.max():g} corpus")
    b.legend(fontsize=8)
    fig.tight_layout()
    return fig


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def reorder_metrics(reorder: pd.DataFrame) -> list[metrics.Record]:
    """`bench mediani_scoring_reorder` rows: ours at 1 thread against lexical-reordering-score (ratio, with its
    interval; none where Moses' program was not built)."""
    recs: list[metrics.Record] = []
    for r in reorder_table(reorder).itertuples():
        if r.system == "ours-reorder" and r.threads == 1:
            recs += metrics.ratios("mediani_scoring", "reorder,threads=1",
                                   {"speedup_vs_moses_reorder": r.speedup_vs_moses_reorder}, r)
    return recs


def e2e_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """The end-to-end rows (:func:`e2e_table`): ours against Moses end to end (ratio, with its interval), under the
    key it had when Table 3's full-corpus row carried it (fraction=1), so its history goes on."""
    recs: list[metrics.Record] = []
    for r in e2e_table(rows).itertuples():
        if r.key == "ours, end to end":
            recs += metrics.ratios("mediani_scoring", "fraction=1", {"speedup_vs_moses_e2e": r.speedup_vs_moses_e2e},
                                   r)
    return recs


def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench mediani_scoring` rows. exact per corpus fraction: how many distinct phrase tables (MD5 of the bytes) our
    thread counts and the distributed form wrote: 1. The digest itself, the extract's line count and the pair
    count are NOT exact: the corpus is aligned by eflomal, which is unseeded, so the extract (and so the
    phrase table) changes from one fresh run to the next. ratio: our most-threads speed-up over one thread
    and over the sort pipeline per fraction (Table 3), and the distributed form's critical path against the
    sort pipeline (Table 4)."""
    recs: list[metrics.Record] = []
    if "table_md5" in rows:
        for frac, g in rows[rows.system.isin(["ours", "distributed"])].groupby("fraction"):
            n = g.table_md5.dropna().nunique()
            if n:
                recs.append(("mediani_scoring", f"fraction={frac:g}", "distinct_tables", str(n), "exact"))
    for r in moses_checks(rows).itertuples():
        for m in ("only_ours", "only_moses", "value_mismatches", "alignment_mismatches", "count_mismatches"):
            recs.append(("mediani_scoring", f"fraction={r.fraction:g}", f"moses_{m}", str(int(getattr(r, m))),
                         "exact"))
    for r in table3(rows).itertuples():
        recs += metrics.ratios("mediani_scoring", f"fraction={r.fraction:g}",
                               {"thread_speedup": r.thread_speedup, "speedup_vs_sort": r.speedup_vs_sort,
                                "speedup_vs_moses": r.speedup_vs_moses,
                                "speedup_vs_moses_1t": r.speedup_vs_moses_1t}, r)
    t4 = table4(rows)
    for r in t4.itertuples():
        recs += metrics.ratios("mediani_scoring", f"distributed,k={int(r.partitions)}",
                               {"speedup_vs_sort": r.speedup_vs_sort}, r)
    return recs


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report mediani_scoring`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("mediani_scoring", ("mediani",),
         help="Mediani Tables 1-4 and the scaling figure",
         settings=(
             arg("--rows", nargs="+", required=True),
             arg("--bleu", nargs="*", default=[], help="`bench mediani_scoring_bleu` rows (Table 2)"),
             arg("--reorder", nargs="*", default=[],
                 help="`bench mediani_scoring_reorder` rows: tables/mediani_reorder.{csv,md}"),
             arg("--e2e", nargs="*", default=[],
                 help="`bench mediani_scoring --systems moses-e2e,ours-e2e` rows (the rule mediani_e2e_bench): "
                      "tables/mediani_e2e.{csv,md}; without it, the end-to-end rows of --rows (an older whole "
                      "sweep's)"),
             arg("--outdir", required=True, help="writes tables/mediani_table{1,2,3,4}.{csv,md}, figures/"),
             arg("--metrics", help="output CSV of regression metrics "
                                    "(smtbench.report.mediani_scoring.regression_metrics)"),
             counts_arg(),
         )),
)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path
    from .common import check_counts, COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "mediani_scoring")
    reorder = read_rows(args.reorder, "mediani_reorder") if args.reorder else None  # (its own run and machine)
    e2e = read_rows(args.e2e, "mediani_scoring") if args.e2e else rows  # (its own run and machine)
    check_counts(args.counts)  # a bad --counts stops here, before any output (or folder) is made
    out = Path(args.outdir)
    cpu = f"{rows.machine_cpu.iloc[0]}, {rows.machine_cores.iloc[0]} cores" if "machine_cpu" in rows else ""
    status = moses_status(rows)
    common = (f"Two live Moses baselines, each named by what it runs (column `runs`). Core: Moses = Moses' own "
              f"`score` (direct, then --Inverse) and `consolidate`, GNU sort (LC_ALL=C, --parallel=threads) of the "
              f"extract files and of the inverse half between (`tm score-moses`: at 1 thread one step at a time, at "
              f"N threads the two sorts and the two directions side by side), on the same uncompressed fraction "
              f"files as ours (`smtbench tm score`: C, pthreads, external-memory runs + multiway merges), in the "
              f"same run, repeats interleaved ({status}); it is only the scoring core of Moses' training, not what "
              f"a Moses user runs; end to end (tm extract + tm score against train-model.perl steps 4-7): table "
              f"mediani_e2e. "
              f"sort pipeline = GNU sort + a single-threaded streaming scorer in C + consolidate (the Moses design "
              f"in our code); in-memory = pandas. Seconds are minima over repeats on {cpu}, each a whole child "
              f"process (interpreter start included for ours). Our tables were checked equal to each other "
              f"inside the benchmark, Moses' against ours pair by pair (table_check / moses_table_check: pairs, "
              f"alignments, counts, the 4 scores to Moses' printed precision). paper_*: Mediani et al. 2012 "
              f"(hours on 8/16-core machines, 13.8M-29.4M sentence pairs; their Moses is the whole training "
              f"step, closer to our end-to-end row than to the core). allocator: the malloc Moses' score and "
              f"consolidate run with, read from the binaries by the run (smtbench.moses_peer.allocator_of). Ratios "
              f"(declared: smtbench.report.mediani_scoring): against Moses' core at the row's thread count, "
              f"against our sort pipeline and our "
              f"1-thread run within the run; Table 4's critical path is measured where the k parts ran side by side "
              f"on k <= the machine's cores, otherwise (parts one after another) it is a projection and carries no "
              f"ratio. A ratio cell left blank: its rows are not in this run." + " " + INTERVAL_NOTE)
    ext = rows[rows.system == "moses-extract"] if "system" in rows else rows.iloc[:0]
    if len(ext):
        e = ext.iloc[0]
        common += (f" Moses' `extract` on the whole corpus: {e.status}." if isinstance(e.get("status"), str) else
                   f" Moses' `extract` on the whole corpus ({e.seconds:.1f} s, not part of scoring): {e.check}.")
    write_table(table1(rows), out / "tables" / "mediani_table1",
                "Mediani et al. 2012 Table 1: phrase-scoring time per system (largest corpus)", notes=common)
    if args.bleu:
        bleu = read_rows(args.bleu, "mediani_bleu")
        b = bleu.iloc[0]
        write_table(table2(bleu), out / "tables" / "mediani_table2",
                    "Mediani et al. 2012 Table 2: BLEU with Moses' phrase table and with ours",
                    notes=(f"Our cube decoder (pop limit {b.pop_limit}, stack {b.stack_size}) on the first "
                           f"{b.sentences} dev verses, one moses.ini (`tm model`: default weights, our reordering "
                           f"table, our LM) with the phrase table from Moses' score/consolidate and with ours, each "
                           f"filtered to the input (filter-model-given-input.pl). BLEU: sacrebleu --tokenize none "
                           f"on the tokenized lowercased text. output_sha: digest of the 1-best lines (identical "
                           f"tables give identical translations). paper_*: Mediani et al. 2012 Table 2 (WMT2011 "
                           f"en-fr / fr-en; their relative frequencies KN-smoothed)."))
    if reorder is not None:
        t = reorder_table(reorder)
        r0 = reorder.iloc[0]
        md5 = {sys_: set(reorder.loc[reorder.system == sys_, "table_md5"].dropna())
               for sys_ in ("ours-reorder", "moses-reorder")} if "table_md5" in reorder else {}
        same_bytes = (" The two tables, decompressed, are also identical byte for byte (table_md5 equal: ours is "
                      "written in its lines' LC_ALL=C order, the order Moses' program writes from its sorted input)."
                      if len(md5.get("ours-reorder", ())) == 1 and md5.get("ours-reorder") == md5.get("moses-reorder")
                      else "")
        write_table(t, out / "tables" / "mediani_reorder",
                    "The reordering table alone: ours against Moses' lexical-reordering-score (issue 43)",
                    notes=(f"Both read the same input, the sweep's orientation file sorted once (LC_ALL=C, untimed) "
                           f"into {Path(str(r0.get('input', 'extract.o.sorted.gz'))).name} (what train-model.perl's "
                           f"step 7 reads: {int(r0.lines)} lines), and write "
                           f"reordering-table.wbe-msd-bidirectional-fe.gz (msd-bidirectional-fe, smoothing 0.5), "
                           f"each as a child process timed by wall clock (interpreter start included for ours; "
                           f"ours inflates its .gz input on a second thread of its process, as every .gz reader of "
                           f"ours does, Moses' program on its one thread), "
                           f"repeats interleaved, on {r0.get('machine_cpu', '')}, {r0.get('machine_cores', '')} "
                           f"cores. Moses' program has no threads option: the ratio divides ours at 1 thread by it "
                           f"(declared: smtbench.report.mediani_scoring.VS_MOSES_REORDER); ours at more threads "
                           f"(gzip of the table's parts in parallel) is shown without a ratio. check: both tables "
                           f"compared pair by pair (the six scores to printed precision) in the first repeat, ours "
                           f"byte for byte across thread counts.{same_bytes} " + INTERVAL_NOTE))
    write_table(with_counts(table3(rows), args.counts), out / "tables" / "mediani_table3",
                "Mediani et al. 2012 Table 3: phrase-scoring time against corpus size",
                notes=common + " corpus: a fraction > 1 is the corpus replicated (the same distinct pairs, each count "
                               "multiplied). paper_corpus maps our full corpus to EPPS+NC and our largest to +UN "
                               "(the smaller and the larger of the paper's two corpora); BLEU: Table 2 "
                               "(mediani_table2)."
                               + (" " + COUNT_NOTE if args.counts else ""))
    write_table(e2e_table(e2e), out / "tables" / "mediani_e2e",
                "Mediani end to end: ours against Moses' train-model.perl steps 4-7 (issue 43)",
                notes=e2e_notes(e2e) + " " + INTERVAL_NOTE)
    write_table(table4(rows), out / "tables" / "mediani_table4",
                "Mediani et al. 2012 Table 4: the distributed form (partition, score with partial counts, merge)",
                notes=common + " critical_path_s = partition + slowest partition + merge (one node per "
                               "partition); seconds_min = all of it on this machine, one after another.")
    save_figure(fig_scaling(rows), out / "figures" / "mediani_scaling.png")
    if args.metrics:
        metrics.write(regression_metrics(rows) + e2e_metrics(e2e)
                      + (reorder_metrics(reorder) if reorder is not None else []), args.metrics)
    return 0
