"""The repeat protocol (smtbench.protocol): intervals, pairing, order, adaptive stopping, the slow-spell probe."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from smtbench.benchutil import RowWriter
from smtbench.protocol import (CI, Protocol, Ratio, RepeatLoop, SpellProbe, Task, paired_ratios, ratio_ci,
                               ratio_columns, spell_counts, t_quantile)


def test_t_quantile_known_values():
    for df, want in ((1, 12.7062), (2, 4.3027), (3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423)):
        assert t_quantile(0.975, df) == pytest.approx(want, rel=2e-3)


def test_ci_coverage_on_synthetic_lognormal_ratios():
    """95% intervals of per-repeat ratios cover the true ratio about 95% of the time, at small and larger n."""
    rng = np.random.default_rng(7)
    true = 1.3
    for n in (3, 5, 12):
        hits = 0
        trials = 300
        for _ in range(trials):
            r = true * np.exp(rng.normal(0, 0.08, n))
            c = ratio_ci(r, seed=int(rng.integers(1 << 30)))
            assert c.n == n and c.low < c.estimate < c.high
            hits += c.low <= true <= c.high
        assert 0.88 <= hits / trials <= 0.995, (n, hits / trials)


def test_ci_edge_cases_and_judging():
    assert ratio_ci([]).n == 0
    one = ratio_ci([2.0])
    assert one.n == 1 and one.estimate == pytest.approx(2.0) and math.isnan(one.low)
    assert one.judge(1.5) == "undecided" and one.half_width == math.inf
    c = ratio_ci([2.1, 2.2, 2.15, 2.12])
    assert c.judge(2.0) == "meets" and c.judge(3.0) == "misses" and c.judge(2.15) == "undecided"
    assert ratio_ci([1.5, 1.5, 1.5]) == ratio_ci([1.5, 1.5, 1.5])  # fixed seed: same rows, same table
    cols = ratio_columns("speedup", [1.1, 1.2, 1.3])
    assert set(cols) == {"speedup_paired", "speedup_ci_low", "speedup_ci_high", "n_repeats"} and cols["n_repeats"] == 3
    assert cols["speedup_ci_low"] <= cols["speedup_paired"] <= cols["speedup_ci_high"]


class Machine:
    """A fake machine: a slowdown factor that changes per attempt (a drifting machine, or a slow spell), applied
    to every timed point; point B is memory-bound and suffers a spell more than point A."""

    def __init__(self, drift=None, spell_attempts=(), spell=1.8):
        self.attempt = 0
        self.drift = drift or (lambda i: 1.0)
        self.spell_attempts = set(spell_attempts)
        self.spell = spell
        self.rng = np.random.default_rng(3)
        self.calls = 0
        self.by_calls = False

    def in_spell(self) -> bool:
        return self.attempt in self.spell_attempts

    def time(self, base: float, memory_bound: bool) -> float:
        if self.by_calls:  # no probe to count the attempts: two points per attempt
            self.attempt = self.calls // 2
        self.calls += 1
        f = self.drift(self.attempt) * math.exp(self.rng.normal(0, 0.02))
        if self.in_spell():
            f *= self.spell if memory_bound else 1.05
        return base * f


def run_loop(m: Machine, proto: Protocol, with_probe=True):
    out = io.StringIO()
    w = RowWriter("test", out)
    seen: list[tuple[int, str]] = []

    def point(name, base, mem):
        def fn(rep):
            t = m.time(base, mem)
            seen.append((rep, name))
            w.emit(point=name, repeat=rep, elapsed_ns=t)
            return t
        return fn

    m.by_calls = not with_probe

    def probe():
        return 100.0 * (2.0 if m.in_spell() else 1.0)

    class Bump:  # advances the fake machine's attempt counter when a repeat ends (the probe after the repeat)
        calls = 0

        def __call__(self):
            v = probe()
            Bump.calls += 1
            if Bump.calls > 4 and Bump.calls % 2 == 0:  # 4 calibration calls, then start+end per attempt
                m.attempt += 1
            return v

    tasks = [Task("a", point("a", 100.0, False)), Task("b", point("b", 150.0, True))]
    loop = RepeatLoop(proto, w, tasks, [Ratio.speedup("a_vs_b", "a", "b")], probe=Bump() if with_probe else None)
    s = loop.run()
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    return s, rows, seen


def test_pairing_cancels_a_drifting_machine_and_rows_keep_every_repeat():
    m = Machine(drift=lambda i: 1.0 + 0.5 * i)  # each repeat 50% slower than the one before
    s, rows, _ = run_loop(m, Protocol(repeats=6, probe_mib=0), with_probe=False)
    assert s.repeats == 6 and len(rows) == 12 and s.stop == "fixed"
    c = s.cis["a_vs_b"]
    assert c.low <= 1.5 <= c.high and c.half_width < 0.08
    df = pd.DataFrame(rows)
    r = paired_ratios(df, df["point"] == "a", df["point"] == "b")
    assert len(r) == 6 and all(abs(x - 1.5) < 0.2 for x in r)  # while the times grow 3.5x
    # unpaired (min over repeats of each point) would not see the drift; paired ratios are each near 1.5
    assert ratio_ci(r).estimate == pytest.approx(c.estimate)


def test_order_alternates_or_shuffles_with_a_recorded_seed():
    m = Machine()
    _, rows, seen = run_loop(m, Protocol(repeats=4, probe_mib=0), with_probe=False)
    assert [n for _, n in seen] == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert {r["protocol_order"] for r in rows} == {"alternate"}
    tasks = [Task(k, lambda rep: 1.0) for k in "abcdefgh"]
    w = RowWriter("test", io.StringIO())
    l1 = RepeatLoop(Protocol(repeats=2, order="shuffle", seed=42, probe_mib=0), w, tasks)
    l2 = RepeatLoop(Protocol(repeats=2, order="shuffle", seed=42, probe_mib=0), w, tasks)
    assert [t.key for t in l1.order(1, 0)] == [t.key for t in l2.order(1, 0)]
    assert [t.key for t in l1.order(0, 0)] != [t.key for t in l1.order(1, 0)]
    drawn = RepeatLoop(Protocol(repeats=2, order="shuffle", probe_mib=0), w, tasks)
    assert drawn.seed is not None
    out = io.StringIO()
    w2 = RowWriter("test", out)
    t2 = [Task(k, (lambda k: lambda rep: w2.emit(point=k, repeat=rep) and None)(k)) for k in "abc"]
    RepeatLoop(Protocol(repeats=2, order="shuffle", seed=9, probe_mib=0), w2, t2).run()
    assert {json.loads(x)["protocol_seed"] for x in out.getvalue().splitlines()} == {9}


def test_adaptive_repeats_stop_at_the_target_or_the_budget():
    m = Machine()
    m.rng = np.random.default_rng(11)
    m.time = lambda base, mem: base * math.exp(m.rng.normal(0, 0.10))  # noisy: 3 repeats are not enough
    s, rows, _ = run_loop(m, Protocol(repeats=3, max_repeats=200, target=0.05, probe_mib=0), with_probe=False)
    assert s.stop == "target" and 3 < s.repeats < 200 and s.cis["a_vs_b"].half_width <= 0.05
    last = [r for r in rows if r["protocol_stop"]]
    assert {r["protocol_stop"] for r in last} == {"target"} and {r["repeat"] for r in last} == {s.repeats - 1}
    assert {r["protocol_target"] for r in rows} == {0.05}
    ticks = iter(range(10_000))
    w = RowWriter("test", io.StringIO())
    noisy = [Task("a", lambda rep: 100 * math.exp(m.rng.normal(0, 0.3))),
             Task("b", lambda rep: 150 * math.exp(m.rng.normal(0, 0.3)))]
    s2 = RepeatLoop(Protocol(repeats=3, max_repeats=500, target=0.001, budget_s=5, probe_mib=0), w, noisy,
                    [Ratio.speedup("r", "a", "b")], clock=lambda: float(next(ticks))).run()
    assert s2.stop == "budget" and s2.repeats < 500
    s3 = RepeatLoop(Protocol(repeats=3, max_repeats=6, target=0.001, probe_mib=0), w, noisy,
                    [Ratio.speedup("r", "a", "b")]).run()
    assert s3.stop == "max_repeats" and s3.repeats == 6


def test_an_injected_slow_spell_is_flagged_retaken_and_the_ratio_stays_in_the_clean_interval():
    clean, _, _ = run_loop(Machine(), Protocol(repeats=5))
    assert clean.retaken == 0 and clean.cis["a_vs_b"].n == 5
    # attempts 1 and 2 (repeat 1 and its first retake) and 4 run in a spell that slows memory-bound b by 1.8x
    m = Machine(spell_attempts={1, 2, 4})
    s, rows, _ = run_loop(m, Protocol(repeats=5, max_retakes=2))
    assert s.retaken == 3 and s.flagged_kept == 0 and s.repeats == 5 and s.attempts == 8
    df = pd.DataFrame(rows)
    assert df["spell_probe_ns"].notna().all() and (df["spell_calibration_ns"] == 100.0).all()
    flagged = df[df["spell_flagged"]]
    assert len(flagged) == 6 and flagged["retaken"].all() and (flagged["spell_probe_ns"] == 200.0).all()
    counts = spell_counts(df)
    assert counts["retaken"] == 3 and counts["flagged_kept"] == 0
    assert counts["probe_ns"] == df.loc[~df["retaken"], "spell_probe_ns"].median() < 200  # the kept repeats' regime
    r = paired_ratios(df, df["point"] == "a", df["point"] == "b")  # the retaken attempts are left out
    assert len(r) == 5
    c = clean.cis["a_vs_b"]
    assert c.low <= s.cis["a_vs_b"].estimate <= c.high
    # without retakes the spell would have pulled the ratio out of the clean interval
    m2 = Machine(spell_attempts={1, 2, 4})
    s2, _, _ = run_loop(m2, Protocol(repeats=5, max_retakes=0))
    assert s2.flagged_kept == 3 and not c.low <= s2.cis["a_vs_b"].estimate <= c.high


def test_retakes_are_bounded():
    m = Machine(spell_attempts=set(range(1, 100)))  # a spell that never ends, from the second repeat on
    s, rows, _ = run_loop(m, Protocol(repeats=2, max_retakes=1))
    assert s.repeats == 2 and s.retaken == 1 and s.flagged_kept == 1 and s.attempts == 3


def test_the_real_probe_measures_dependent_loads():
    p = SpellProbe(mib=2, steps=2000)
    v = p.measure()
    assert 0 < v < 1e6


def test_probe_walks_go_on_over_new_lines_and_warm_up_untimed():
    """Each walk continues the cycle where the last stopped (a walk re-reading the same lines measured a cache, not
    memory), and a warm measurement is an untimed walk and then the timed one: the slot reached shows both."""
    two_walks = SpellProbe(mib=2, steps=1000, warmup=False)
    two_walks.measure()
    first = two_walks.last_slot
    two_walks.measure()
    one_long = SpellProbe(mib=2, steps=2000, warmup=False)
    one_long.measure()
    warm = SpellProbe(mib=2, steps=1000)
    warm.measure()
    assert two_walks.last_slot == one_long.last_slot == warm.last_slot != first


def test_protocol_options_are_validated():
    with pytest.raises(ValueError, match="--max-repeats"):
        Protocol(repeats=5, max_repeats=3).validate()
    with pytest.raises(ValueError, match="--spell-factor"):
        Protocol(spell_factor=1.0).validate()
    with pytest.raises(ValueError, match="--order"):
        Protocol(order="random").validate()
    assert isinstance(ratio_ci([1.0, 1.1]), CI)


# ------------------------------------------------------------------ the report modules compute intervals from rows

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def committed_rows(experiment: str, pattern: str = "*.jsonl"):
    from smtbench.report.common import read_rows

    files = sorted((ROOT / "results" / "raw" / experiment).glob(pattern))
    if not files:
        pytest.skip(f"no committed rows of {experiment}")
    return read_rows(files)


def assert_intervals(table: pd.DataFrame, ratios: list[str]) -> None:
    assert "n_repeats" in table.columns
    for r in ratios:
        lo, hi = table[f"{r}_ci_low"], table[f"{r}_ci_high"]
        ok = lo.notna() & hi.notna()
        assert ok.any(), r
        v = pd.to_numeric(table[r], errors="coerce")
        assert (lo[ok] <= hi[ok]).all() and (v[ok] > 0).all()
        est = table[f"{r}_paired"]  # the interval's own estimate, always inside it (the best/best ratio may not be)
        assert ((lo[ok] <= est[ok] + 1e-4) & (est[ok] <= hi[ok] + 1e-4)).all(), r


def synthetic_lm_rows(n_rep: int = 5) -> pd.DataFrame:
    """Rows of a protocol run: sequential 100 ns, automaton 80 ns (q=4) / 90 (q=2), KenLM 110 ns, 2% noise, one retaken
    attempt whose automaton ran slow (left out)."""
    rng = np.random.default_rng(5)
    rows = []
    for rep in range(n_rep):
        for attempt in ((0, 1) if rep == 2 else (0,)):
            retaken = rep == 2 and attempt == 0
            for be, q, ns in (("sequential", 0, 100), ("automaton", 2, 90), ("automaton", 4, 80),
                              ("kenlm-probing-cpp", None, 110), ("kenlm-module", None, 200)):
                slow = 3.0 if retaken and be == "automaton" else 1.0
                rows.append(dict(model="m", backend=be, queue_size=q, repeat=rep, attempt=attempt, run_id="r1",
                                 retaken=retaken, spell_flagged=retaken, model_bytes=1e6, order=3, ngrams=10,
                                 queries=1000, synthetic=False,
                                 ns_per_query=ns * slow * math.exp(rng.normal(0, 0.02))))
    return pd.DataFrame(rows)


def test_mokry_lm_table_has_intervals_from_paired_repeats():
    from smtbench.report import mokry_lm

    t = mokry_lm.best_speedups(synthetic_lm_rows())
    assert_intervals(t, ["speedup", "sequential_vs_kenlm_probing_cpp", "automaton_vs_kenlm_probing_cpp",
                         "sequential_vs_kenlm"])
    row = t.iloc[0]
    assert row.n_repeats == 5 and row.retaken_repeats == 1 and row.best_queue_size == 4
    assert row.speedup_ci_low < 1.25 < row.speedup_ci_high  # 100/80, the slow retaken attempt left out
    old = committed_rows("mokry_lm")  # rows from before the protocol still render (paired on repeat)
    assert_intervals(mokry_lm.table3_3(old), ["speedup", "automaton_vs_kenlm_probing_cpp"])


def test_glm_table3_has_intervals():
    from smtbench.report import glm_btree

    rows = committed_rows("glm_btree")
    assert_intervals(glm_btree.table3(rows), ["vs_probing_1", "vs_kenlm_trie_cpp"])


def test_mokry_hash_tables_have_intervals():
    from smtbench.report import mokry_hash

    rows = committed_rows("mokry_hash")
    assert_intervals(mokry_hash.table3_2(rows), ["miss_speedup", "hit_speedup"])
    assert_intervals(mokry_hash.layouts(rows), ["speedup", "best_over_floor"])


def test_mediani_tables_have_intervals():
    from smtbench.report import mediani_scoring

    rows = committed_rows("mediani_scoring", "rows.jsonl")  # bleu.jsonl: quality rows, read apart (--bleu)
    assert_intervals(mediani_scoring.table1(rows), ["speedup_vs_sort"])
    assert_intervals(mediani_scoring.table3(rows), ["speedup_vs_sort", "thread_speedup"])
    assert_intervals(mediani_scoring.table4(rows), ["speedup_vs_sort", "vs_single_run"])


def test_regression_judges_ratio_drift_against_the_intervals(tmp_path):
    from smtbench.report import regress

    def frame(recs):
        return pd.DataFrame(recs, columns=regress.COLUMNS).astype({"value": str})

    base = frame([("e", "k", "a", "2.0", "ratio"), ("e", "k", "a_ci_low", "1.9", "ci"), ("e", "k", "a_ci_high", "2.1", "ci"),
                  ("e", "k", "b", "1.0", "ratio"), ("e", "k", "b_ci_low", "0.5", "ci"), ("e", "k", "b_ci_high", "1.5", "ci"),
                  ("e", "k", "c", "1.0", "ratio"), ("e", "k", "x", "abc", "exact")])
    cur = frame([("e", "k", "a", "2.5", "ratio"), ("e", "k", "a_ci_low", "2.4", "ci"), ("e", "k", "a_ci_high", "2.6", "ci"),
                 ("e", "k", "b", "1.4", "ratio"), ("e", "k", "b_ci_low", "0.6", "ci"), ("e", "k", "b_ci_high", "2.2", "ci"),
                 ("e", "k", "c", "1.2", "ratio"), ("e", "k", "x", "abc", "exact")])
    v = regress.compare(cur, base, tolerance=0.1)
    st = dict(zip(v.table.metric, v.table.status))
    assert st == {"a": "drift", "b": "ok", "c": "drift", "x": "ok"}  # a: 2.5 vs [1.9, 2.1]; b: 40% off, inside
    assert v.failures == 0 and v.drifts == 2
    assert v.table.set_index("metric").loc["a", "ci_low"] == 2.4
    regress.plot(v, "e", 0.1)  # intervals as error bars; c (no interval) with the tolerance


def test_regression_compares_the_interval_estimates_not_the_best_times_ratio():
    """A ratio of best times can lie outside its own interval (the best of each side's repeats from different
    moments): the check compares each interval with the other side's estimate (``<ratio>_paired``), and falls back
    to a side's value only where that side recorded no estimate."""
    from smtbench.report import regress

    def frame(recs):
        return pd.DataFrame(recs, columns=regress.COLUMNS).astype({"value": str})

    base = frame([("e", "k", "a", "1.30", "ratio"), ("e", "k", "a_ci_low", "1.60", "ci"),
                  ("e", "k", "a_ci_high", "1.90", "ci"), ("e", "k", "a_paired", "1.75", "ci")])
    same = frame([("e", "k", "a", "1.80", "ratio"), ("e", "k", "a_ci_low", "1.65", "ci"),
                  ("e", "k", "a_ci_high", "1.85", "ci"), ("e", "k", "a_paired", "1.74", "ci")])
    v = regress.compare(same, base, tolerance=0.1)
    assert dict(zip(v.table.metric, v.table.status)) == {"a": "ok"}  # the values 1.30 / 1.80 would read as drift
    assert v.table.set_index("metric").loc["a", "estimate_baseline"] == 1.75
    moved = frame([("e", "k", "a", "1.75", "ratio"), ("e", "k", "a_ci_low", "2.10", "ci"),
                   ("e", "k", "a_ci_high", "2.30", "ci"), ("e", "k", "a_paired", "2.20", "ci")])
    assert regress.compare(moved, base, tolerance=0.1).drifts == 1  # the value 1.75 would hide the step
    old_base = base[base.metric != "a_paired"]  # a baseline from before the estimates: its value stands in
    assert regress.compare(same, old_base, tolerance=0.1).table.estimate_baseline.iloc[0] == 1.30
    regress.plot(v, "e", 0.1)


def test_ratio_records_carry_the_interval_estimate():
    from smtbench.report import metrics

    per = [1.9, 2.0, 2.1, 2.05, 1.95]
    recs = {m: float(v) for _, _, m, v, _ in metrics.ratios("e", "k", {"a": 1.5, "b": 2.0}, {"a": per})}
    assert recs["a"] == 1.5 and recs["a_ci_low"] <= recs["a_paired"] <= recs["a_ci_high"]
    assert abs(recs["a_paired"] - math.exp(sum(map(math.log, per)) / len(per))) < 1e-4
    assert "b_paired" not in recs and "b_ci_low" not in recs  # no interval, no estimate
    row = {"a_ci_low": 1.6, "a_ci_high": 1.9, "a_paired": 1.75}
    recs = {m: v for _, _, m, v, _ in metrics.ratios("e", "k", {"a": 1.3}, row)}
    assert recs == {"a": "1.3000", "a_ci_low": "1.6000", "a_ci_high": "1.9000", "a_paired": "1.7500"}


def test_history_over_commits_flags_a_step(tmp_path):
    """Two commits of the same experiment's rows, the second with a 30% faster automaton: the history has a point
    per commit with its interval, the second flagged as a step; every headline figure is drawn."""
    import subprocess

    from smtbench.report import history

    def git(*a):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *a], check=True,
                       capture_output=True)

    git("init", "-q")
    raw = tmp_path / "results" / "raw" / "mokry_lm"
    raw.mkdir(parents=True)
    for i, faster in enumerate((1.0, 1.3)):
        rows = synthetic_lm_rows(6)
        rows.loc[rows.backend == "automaton", "ns_per_query"] /= faster
        rows["checksum"] = "0x1p+0"
        rows.to_json(raw / "m.jsonl", orient="records", lines=True)
        git("add", "-A")
        git("commit", "-q", "-m", f"rows {i}")
    h = history.collect(tmp_path)
    sp = h.points[(h.points.metric == "speedup")]
    assert len(sp) == 2 and sp.ci_low.notna().all() and list(sp.step) == [False, True]
    # each point is its interval's estimate (inside it); the tables' best-times ratio is kept beside it
    assert ((sp.ci_low <= sp.value) & (sp.value <= sp.ci_high)).all() and sp.best.notna().all()
    figs = history.write(h, tmp_path / "fig", tmp_path / "hist")
    assert len(figs) == len(history.HEADLINES) and all(f.exists() for f in figs)
    assert (tmp_path / "hist.md").exists()


def test_decoder_reports_have_intervals():
    from smtbench.report import mokry_decoder, moore_quirk, moses2_moses1, moses2_scaling, moses2_search, moses_decode

    for rows in ("oracle.jsonl", "trained-mira.jsonl"):  # one table per rows file (models and weights apart)
        assert_intervals(mokry_decoder.table3_4(committed_rows("mokry_decoder", rows)), ["speedup_vs_off", "speedup_vs_lazy"])
    for rows in ("rows.jsonl", "rows-trained-mira.jsonl"):
        assert_intervals(moses2_search.table5(committed_rows("moses2_search", rows)), ["time_vs_cardinality"])
    sc = committed_rows("moses2_scaling")
    assert_intervals(moses2_scaling.scaling_table(sc), ["speedup_vs_1_thread"])
    assert_intervals(moses2_scaling.fig8_table(sc), ["separate_over_integrated"])
    fig3 = moses2_scaling.fig3_table(sc, None)  # Moses2's figures are recorded (the oracle's): never a ratio
    assert "vs_moses2_same_threads" not in fig3 and "n_repeats" in fig3
    m1 = committed_rows("moses2_moses1")
    assert_intervals(moses2_moses1.fig1(m1), ["speedup_vs_memory"])
    assert_intervals(moses2_moses1.fig2(m1), ["speedup_vs_memory"])
    assert_intervals(moses2_moses1.fig10(m1), ["speedup_vs_1"])
    t6 = moses2_scaling.table6(sc)
    assert t6.time_vs_cache0_ci_low.notna().any() and "n_repeats" in t6
    for sweep in ("rows.jsonl", "rows-mira.jsonl"):  # the untuned sweep and the one on tuned weights
        mq = committed_rows("moore_quirk", sweep)
        assert_intervals(moore_quirk.ratio_table(mq), ["time_ratio_vs_de+ep"])
    nd = ROOT / "results" / "raw" / "moses_decode" / "normal.jsonl"
    if nd.exists():
        from smtbench.report.common import read_rows
        r = read_rows([nd])
        t = moses_decode.normal_table(r)  # the oracle's recorded runs: labelled, never divided by (issue 40)
        assert "vs_moses2_quiet" not in t and t.recorded.str.startswith("recorded, ").sum() == 2


def test_the_time_budget_bounds_retakes():
    ticks = iter(range(10_000))
    m = Machine(spell_attempts=set(range(1, 100)))  # every repeat after the first in a spell
    m.by_calls = False
    out = io.StringIO()
    w = RowWriter("test", out)
    calls = {"n": 0}

    def probe():
        calls["n"] += 1
        if calls["n"] > 4 and calls["n"] % 2 == 0:
            m.attempt += 1
        return 100.0 * (2.0 if m.in_spell() else 1.0)

    tasks = [Task("a", lambda rep: m.time(100.0, False)), Task("b", lambda rep: m.time(150.0, True))]
    s = RepeatLoop(Protocol(repeats=4, max_retakes=5, budget_s=3), w, tasks, probe=probe,
                   clock=lambda: float(next(ticks))).run()
    assert s.repeats == 4 and s.retaken < 3 * 5 and s.flagged_kept >= 1  # the budget stopped the retakes


def test_focus_repeats_only_the_headline_points_after_the_first_repeats():
    """--focus: the first `repeats` time every point; then only those the driver's focus names (here: a and the
    best of b1/b2 so far), with protocol_focused in their rows; without --focus every point every repeat."""
    def run(focus: bool):
        out = io.StringIO()
        w = RowWriter("test", out)
        seen: list[tuple[int, str]] = []

        def point(name, base):
            def fn(rep):
                seen.append((rep, name))
                t = base * (1 + 0.05 * (len(seen) % 3))  # some noise: the interval never reaches the target
                w.emit(point=name, repeat=rep, elapsed_ns=t)
                return t
            return fn

        tasks = [Task(k, point(k, v)) for k, v in (("a", 100.0), ("b1", 90.0), ("b2", 60.0), ("c", 500.0))]
        ratios = [Ratio("a_vs_b", lambda t: t["a"] / min(t[k] for k in ("b1", "b2") if k in t))]
        loop = RepeatLoop(Protocol(repeats=2, max_repeats=5, target=1e-9, probe_mib=0, focus=focus), w, tasks,
                          ratios, focus=lambda kept: ["a", min(("b1", "b2"), key=lambda k: kept[0][k])])
        s = loop.run()
        return s, [json.loads(x) for x in out.getvalue().splitlines()], seen

    s, rows, seen = run(True)
    assert s.repeats == 5 and s.stop == "max_repeats"
    assert sorted(k for r, k in seen if r < 2) == sorted(["a", "b1", "b2", "c"] * 2)
    assert sorted(k for r, k in seen if r >= 2) == sorted(["a", "b2"] * 3)
    assert all(r["protocol_focused"] == (r["repeat"] >= 2) for r in rows)
    assert s.cis["a_vs_b"].n == 5
    s, rows, seen = run(False)
    assert len(seen) == 5 * 4 and "protocol_focused" not in rows[0]


def _regime_run(off_until: float, proto: Protocol, ref_file: str = ""):
    """A fake machine whose regime is off (memory-bound b 2x slower, the working-set probe 80 ns instead of 50) until
    the clock passes ``off_until``; every timed point takes 1 s of the fake clock, a pause its length."""
    from smtbench.protocol import RegimeProbe

    now = {"t": 0.0}
    out = io.StringIO()
    w = RowWriter("test", out)
    rng = np.random.default_rng(7)

    def off() -> bool:
        return now["t"] < off_until

    def point(name, base, mem):
        def fn(rep):
            now["t"] += 1.0
            t = base * (2.0 if mem and off() else 1.0) * math.exp(rng.normal(0, 0.02))
            w.emit(point=name, repeat=rep, elapsed_ns=t)
            return t
        return fn

    def sleep(s):
        now["t"] += s

    proto.regime_reference = ref_file
    tasks = [Task("a", point("a", 100.0, False)), Task("b", point("b", 150.0, True))]
    regime = RegimeProbe("test/model", lambda: 80.0 if off() else 50.0)
    s = RepeatLoop(proto, w, tasks, [Ratio.speedup("a_vs_b", "a", "b")], regime=regime, clock=lambda: now["t"],
                   sleep=sleep).run()
    return s, pd.DataFrame([json.loads(x) for x in out.getvalue().splitlines()]), now["t"]


def test_a_run_off_the_machines_reference_regime_waits_for_it_and_says_so(tmp_path):
    """A regime that lasts the whole start of a run passes the spell probe unseen (it judges a repeat against its own
    run); against a reference file made from another run's rows, the repeats off it are retaken after pauses (not
    counted against the budget), the kept ratio lies in the reference run's interval, and the rows and tables say
    which regime each run was taken in."""
    from smtbench.cli import main
    from smtbench.protocol import reference_ns

    clean, rows, _ = _regime_run(0, Protocol(repeats=5, probe_mib=0))
    rows_file = tmp_path / "clean.jsonl"
    rows.to_json(rows_file, orient="records", lines=True)
    ref = tmp_path / "ref.json"
    assert main(["report", "regime-reference", "--rows", str(rows_file), "--out", str(ref)]) == 0
    assert reference_ns(str(ref), "test/model") == (50.0, "") and reference_ns(str(ref), "x")[0] is None
    c = clean.cis["a_vs_b"]
    # no reference: the off regime's repeats are kept, and the ratio is another one
    s0, rows0, _ = _regime_run(100, Protocol(repeats=5, probe_mib=0))
    assert s0.retaken == 0 and not c.low <= s0.cis["a_vs_b"].estimate <= c.high
    assert rows0["regime_ref_ns"].isna().all() and spell_counts(rows0)["regime_probe_ns"] > 50
    # with the reference and 200 s of waiting: retaken after pauses until the regime is back
    s, rows, end = _regime_run(100, Protocol(repeats=5, max_retakes=5, probe_mib=0, regime_wait_s=200,
                                             regime_pause_s=30, budget_s=10, max_repeats=5), str(ref))
    assert s.repeats == 5 and s.retaken >= 3 and s.regime_off_kept == 0 and 90 <= s.regime_waited_s <= 200
    assert c.low <= s.cis["a_vs_b"].estimate <= c.high
    kept_rows = rows[~rows["retaken"]]
    assert (kept_rows["regime_probe_ns"] == 50.0).all() and (rows["regime_ref_ns"] == 50.0).all()
    assert rows[rows["retaken"]]["regime_off"].all()
    counts = spell_counts(rows)
    assert counts["regime"] == 1.0 and counts["regime_off_kept"] == 0
    # a regime that does not come back: the pauses stop at the wait, later repeats are kept and flagged
    s2, rows2, _ = _regime_run(1e9, Protocol(repeats=4, max_retakes=2, probe_mib=0, regime_wait_s=60,
                                             regime_pause_s=30), str(ref))
    assert s2.regime_waited_s == 60 and s2.regime_off_kept == 4 and s2.repeats == 4
    assert spell_counts(rows2)["regime"] == 1.6
    # another machine's reference is not applied; a file that is no reference is a one-line error naming it
    d = json.loads(ref.read_text())
    d["machine"]["machine_host"] = "elsewhere"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(d))
    v, why = reference_ns(str(other), "test/model")
    assert v is None and "another machine" in why
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ValueError, match="bad.json: not a regime reference"):
        reference_ns(str(bad), "test/model")
