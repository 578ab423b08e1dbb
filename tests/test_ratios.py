"""Issue 40: every ratio a report prints is declared (report.common.declare: numerator, denominator, the fields both
sides share) and computed only through report.common.check_like, which refuses - one line, a ValueError - a ratio
whose numerator and denominator rows come from different runs, clocks or thread counts, and leaves a row without
the ratio where the difference is by design (a multi-thread row of ours against a one-thread peer). The reports are
rendered from the committed rows with one ratio's sides made unlike; and the committed tables are scanned for ratio
columns nobody declared."""
from __future__ import annotations

import csv
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT
from smtbench.errors import UnlikeRatio
from smtbench.report import common

RAW = ROOT / "results" / "raw"

#: tables whose report modules do not declare their ratios yet (issue 40): none left
NOT_CONVERTED: set[str] = set()


def rows(experiment: str, *files: str) -> pd.DataFrame:
    paths = [RAW / experiment / f for f in files]
    if not all(p.exists() for p in paths):
        pytest.skip(f"committed rows {paths} absent")
    return common.read_rows(paths)


def refused(fn, *args) -> str:
    with pytest.raises(UnlikeRatio) as e:
        fn(*args)
    msg = str(e.value)
    assert "\n" not in msg and "refused" in msg
    return msg


# ----------------------------------------------------------------------------------------------- the check itself

def test_check_like_refuses_unlike_runs_threads_and_clocks():
    r = common.Ratio("x_vs_y", num="x", den="y")
    a = pd.DataFrame({"run_id": ["r1", "r1"], "threads": [1, 1]})
    assert common.check_like(r, a, a.copy())
    for key, other in (("run_id", "r2"), ("threads", 2), ("clock", "CPUTime")):
        b = a.assign(**{key: other})
        assert key in refused(common.check_like, r, a, b)
    # by design (declared blank), or a numerator timed outside the run's repeats: no ratio, no error
    assert not common.check_like(common.Ratio("x", "x", "y", blank=("threads",)), a, a.assign(threads=2))
    assert not common.check_like(r, a.drop(columns="run_id"), a)
    # rows from before the repeat protocol (no run ids on either side) pass; a missing field is its default
    assert common.check_like(r, a.drop(columns="run_id"), a.drop(columns="run_id").assign(clock="wall"))


# ----------------------------------------------------------------------------------------------- every converted report

def _one_thread_peers(r: pd.DataFrame) -> pd.DataFrame:
    """The rows without KenLM's multi-thread points (as rows from before the equal-thread peers were)."""
    kenlm = r.backend.isin(["kenlm-trie-cpp", "kenlm-probing-cpp"])
    return r[~(kenlm & (pd.to_numeric(r.threads, errors="coerce").fillna(1) > 1))].copy()


def test_glm_table3_refuses_another_runs_trie_and_gives_multi_thread_rows_no_ratio():
    from smtbench.report import glm_btree
    r = _one_thread_peers(rows("glm_btree", "bible.o5.jsonl"))
    t = glm_btree.table3(r, "bible.o5")
    multi = t.threads.fillna(1) > 1
    assert multi.any() and t.loc[multi, "vs_kenlm_trie_cpp"].isna().all()
    assert t.loc[multi, "vs_kenlm_trie_cpp_ci_low"].isna().all()
    one = t.system == "B-tree CPU (1 thread)"
    assert t.loc[one, "vs_kenlm_trie_cpp_ci_low"].notna().all()
    bad = r.copy()
    bad.loc[bad.backend == "kenlm-trie-cpp", "run_id"] = "another-run"
    assert "another-run" in refused(glm_btree.table3, bad, "bible.o5")


def _with_two_thread_peers(r: pd.DataFrame) -> pd.DataFrame:
    """The committed rows plus KenLM's programs at 2 threads in the same run (synthetic: 1.5x their 1-thread qps)."""
    one = r[r.backend.isin(["kenlm-trie-cpp", "kenlm-probing-cpp"]) & (r.sweep == "table")]
    two = one.assign(threads=2, qps=one.qps * 1.5, path="kenlm_benchmark -q -t 2")
    return pd.concat([r, two], ignore_index=True)


def test_glm_table3_divides_multi_thread_rows_by_the_peer_at_their_thread_count():
    """Issue 40, item 2: a 2-thread row of ours over KenLM at 2 threads (kenlm_benchmark -t 2, same run), with its
    interval; never over the 1-thread peer. A 2-thread peer of another run, or one whose rows say another thread
    count, is refused."""
    from smtbench.report import glm_btree
    r = _with_two_thread_peers(_one_thread_peers(rows("glm_btree", "bible.o5.jsonl")))
    t = glm_btree.table3(r, "bible.o5").set_index("system")
    for peer, col in (("KenLM trie, C++", "vs_kenlm_trie_cpp"), ("KenLM probing, C++", "vs_kenlm_probing_cpp")):
        for threads in (1, 2):
            base = t.loc[f"{peer} ({threads} thread{'s' if threads > 1 else ''})"].qps
            for ours in ("B-tree CPU", "B-tree CPU, stream reuse", "probing LM"):
                row = t.loc[f"{ours} ({threads} thread{'s' if threads > 1 else ''})"]
                assert row[col] == pytest.approx(row.qps / base, rel=1e-5)  # qps: rounded to integers
                assert row[f"{col}_ci_low"] <= row[f"{col}_paired"] <= row[f"{col}_ci_high"]
    # the 2-thread peer is 1.5x the 1-thread one in every repeat (synthetic): a 2-thread row's ratio is 1/1.5 of what
    # the 1-thread peer would give it
    two = t.loc["B-tree CPU (2 threads)"]
    assert two.vs_kenlm_trie_cpp == pytest.approx(two.qps / t.loc["KenLM trie, C++ (1 thread)"].qps / 1.5, rel=1e-5)
    bad = r.copy()
    bad.loc[(bad.backend == "kenlm-trie-cpp") & (bad.threads == 2), "run_id"] = "another-run"
    assert "another-run" in refused(glm_btree.table3, bad, "bible.o5")


def test_glm_table3_never_divides_by_a_peer_at_another_thread_count():
    """Without a 2-thread peer (rows from before KenLM was timed at every thread count) the 2-thread rows carry no
    KenLM ratio; the checks themselves refuse a peer whose rows' thread count is not the row's."""
    from smtbench.report import glm_btree
    from smtbench.report.common import check_like
    r = _one_thread_peers(rows("glm_btree", "bible.o5.jsonl"))
    t = glm_btree.table3(r, "bible.o5")
    multi = t.threads.fillna(1) > 1
    for col in ("vs_kenlm_trie_cpp", "vs_kenlm_probing_cpp"):
        assert t.loc[multi, col].isna().all() and t.loc[multi, f"{col}_ci_low"].isna().all()
        assert t.loc[t.system == "B-tree CPU (1 thread)", f"{col}_ci_low"].notna().all()
    ours = r[(r.backend == "btree") & (r.threads == 2) & (r.sweep == "table")]
    trie = r[(r.backend == "kenlm-trie-cpp") & (r.sweep == "table")]
    assert "threads 2 vs 1" in refused(check_like, glm_btree.VS_KENLM_TRIE, ours, trie)
    # the note's spread sentence comes from the rows (issue 40 item 6: the peer's variance, not typed in)
    note = glm_btree.spread_note(r, "bible.o5")
    assert note.startswith("Spread in this run") and "KenLM's trie" in note and "the B-tree" in note
    assert glm_btree.spread_note(r[r.backend != "kenlm-trie-cpp"], "bible.o5") == ""


def test_mokry_lm_refuses_unlike_runs_and_threads():
    from smtbench.report import mokry_lm
    r = rows("mokry_lm", "bible.o3.jsonl")
    mokry_lm.table3_3(r)
    for field, value in (("run_id", "another-run"), ("threads", 2)):
        bad = r.copy()
        bad.loc[bad.backend == "kenlm-probing-cpp", field] = value
        assert "kenlm_probing_cpp" in refused(mokry_lm.table3_3, bad)


def test_mokry_hash_refuses_unlike_runs_and_gives_kenlms_cpu_clock_no_ratio():
    from smtbench.report import mokry_hash
    r = rows("mokry_hash", "mib1024.jsonl")
    lay = mokry_hash.layouts(r)
    assert "vs_kenlm_benchmark" not in lay and lay["speedup_ci_low"].notna().any()
    if "cpu_ns_per_lookup" in r:  # rows with our CPU time (the committed ones since 2026-11-29): ratio + interval
        vs = mokry_hash.vs_kenlm(r)
        assert len(vs) == 3 and vs["vs_kenlm_benchmark"].notna().all() and vs["vs_kenlm_benchmark_ci_low"].notna().all()
        assert (vs.vs_kenlm_benchmark_ci_low <= vs.vs_kenlm_benchmark_paired).all()
    # KenLM's CPUTime() against rows of ours with no CPU time: no ratio, re-measure
    old = r.drop(columns=[c for c in r.columns if c.startswith("cpu_ns")])
    vs = mokry_hash.vs_kenlm(old)
    assert len(vs) == 3 and vs["vs_kenlm_benchmark"].isna().all() and vs.note.str.startswith("re-measure").all()
    bad = r.copy()
    bad.loc[(bad.variant == "kv") & (bad.queue_size == 0), "run_id"] = "another-run"
    assert "speedup" in refused(mokry_hash.table3_2, bad)
    bad = r.copy()  # (threads are part of a hash point's key: rows of another thread count are another point)
    bad.loc[(bad.variant == "keys") & (bad.queue_size == 0), "clock"] = "CPUTime"
    assert "clock" in refused(mokry_hash.layouts, bad)


def test_mediani_refuses_unlike_moses_rows_and_projects_table4():
    from smtbench.report import mediani_scoring as ms
    r = rows("mediani_scoring", "rows.jsonl")
    t4 = ms.table4(r)
    cores = int(r.machine_cores.dropna().iloc[0])
    proj = t4.partitions > cores  # more parts than cores: a projection, no ratio beside it
    assert proj.any() and t4.loc[proj, "critical_path"].str.startswith("projected").all()
    assert t4.loc[proj, ["speedup_vs_sort", "speedup_vs_moses", "vs_single_run"]].isna().all().all()
    side = (t4.partitions > 1) & ~proj  # k <= cores, parts run side by side: measured, with its ratio
    assert t4.loc[side, "critical_path"].str.startswith("measured").all()
    assert t4.loc[side, "vs_single_run"].notna().all()
    bad = r.copy()
    bad.loc[bad.system == "moses", "run_id"] = "another-run"
    assert "another-run" in refused(ms.table1, bad)
    bad = r.copy()
    bad.loc[bad.system == "sort", "clock"] = "CPUTime"
    assert "speedup_vs_sort" in refused(ms.table3, bad)


def test_moses_decode_refuses_a_peer_timed_at_other_threads_or_in_another_run():
    from smtbench.report import moses_decode
    r = rows("moses_decode", "normal.jsonl")
    t = moses_decode.live_table(r)
    assert t.ours_speedup_ci_low.notna().sum() == 3  # ours (1) and both peers
    for field, value in (("threads", 2), ("run_id", "another-run")):
        bad = r.copy()
        bad.loc[(bad.kind == "peer_timing") & (bad.system == "moses2"), field] = value
        assert "ours_speedup" in refused(moses_decode.live_table, bad)
    o = rows("moses_decode", "normal-oracle.jsonl")
    rec = moses_decode.normal_table(o)  # the oracle's recorded runs: labelled, no ratio beside them
    assert not common.ratio_columns_of(rec.columns)
    assert rec.recorded.iloc[1:].str.startswith("recorded, ").all()


def test_the_cli_prints_a_refused_ratio_in_one_line(tmp_path):
    r = rows("mokry_lm", "bible.o3.jsonl")
    r.loc[r.backend == "kenlm-probing-cpp", "run_id"] = "another-run"
    src = tmp_path / "rows.jsonl"
    r.to_json(src, orient="records", lines=True)
    out = tmp_path / "t"
    p = subprocess.run([sys.executable, "-m", "smtbench.cli", "report", "mokry_lm", "--rows", str(src), "--table",
                        str(out), "--figure", str(tmp_path / "f.png")], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "refused" in p.stderr
    assert not (tmp_path / "t.csv").exists()


# ----------------------------------------------------------------------------------------------- the committed tables

def test_no_committed_table_prints_an_undeclared_ratio():
    declared = common.declared()
    assert "glm_table3" in declared and "moses_decode_normal" in declared  # importable, filled by the modules
    tables = sorted((ROOT / "results" / "tables").glob("*.csv"))
    assert tables
    undeclared = {}
    for path in tables:
        with open(path, newline="", encoding="utf-8") as fh:
            columns = next(csv.reader(fh))
        ratios = common.ratio_columns_of(columns)
        if any(path.stem == s or path.stem.startswith(s + "_") for s in NOT_CONVERTED):
            continue
        extra = ratios - common.declared_for(path.stem, declared)
        if extra:
            undeclared[path.stem] = sorted(extra)
    assert not undeclared, f"ratio columns no report declares (report.common.declare): {undeclared}"


def test_the_scan_recognizes_ratio_columns():
    cols = ["system", "vs_probing_1", "vs_probing_1_ci_low", "ours_speedup_median", "paper_speedup", "iterations",
            "best_over_floor_paired", "time_ratio_vs_de+ep", "qps"]
    assert common.ratio_columns_of(cols) == {"vs_probing_1", "ours_speedup", "best_over_floor", "time_ratio_vs_de+ep"}


def _one_run(r: pd.DataFrame) -> pd.DataFrame:
    """The rows as one run (rows from before the repeat protocol carry no run id): so that a run id changed on one
    side is a difference the check must see."""
    return r.assign(run_id="run-1")


@pytest.mark.parametrize("case", ["mokry_decoder", "moses2_search", "moses2_moses1_fig1", "moses2_moses1_fig10",
                                  "moses2_scaling_table6", "moses2_scaling_fig9", "moore_quirk_ratios",
                                  "moore_quirk_moses"])
def test_every_other_report_refuses_a_ratio_across_runs(case):
    """Each remaining report, rendered from its committed rows as one run, then with the rows on one side of one
    ratio moved to another run: refused, one line."""
    from smtbench.report import mokry_decoder, moore_quirk, moses2_moses1, moses2_scaling, moses2_search
    cases = {
        "mokry_decoder": ("mokry_decoder", "oracle.jsonl", mokry_decoder.table3_4, lambda r: r.point == "off"),
        "moses2_search": ("moses2_search", "rows.jsonl", moses2_search.table5, lambda r: r.queues == "cardinality"),
        "moses2_moses1_fig1": ("moses2_moses1", "rows.jsonl", moses2_moses1.fig1,
                               lambda r: r.phrase_table == "memory"),
        "moses2_moses1_fig10": ("moses2_moses1", "rows.jsonl", moses2_moses1.fig10, lambda r: r.threads == 1),
        "moses2_scaling_table6": ("moses2_scaling", "rows.jsonl", moses2_scaling.table6,
                                  lambda r: (r.kind == "timing") & (r.cache == 0)),
        "moses2_scaling_fig9": ("moses2_scaling", "rows.jsonl", moses2_scaling.scaling_table,
                                lambda r: (r.kind == "timing") & (r.threads == 1)),
        "moore_quirk_ratios": ("moore_quirk", "rows.jsonl", moore_quirk.ratio_table, lambda r: r.variant == "de+ep"),
        "moore_quirk_moses": ("moore_quirk", "moses.jsonl", moore_quirk.moses_table, lambda r: r.variant == "de+ep"),
    }
    experiment, file, fn, side = cases[case]
    r = _one_run(rows(experiment, file))
    fn(r)
    bad = r.copy()
    bad.loc[side(bad), "run_id"] = "another-run"
    assert "another-run" in refused(fn, bad)


@pytest.mark.parametrize("case", ["mokry_decoder", "moses2_search", "moore_quirk_ratios"])
def test_reports_refuse_a_ratio_across_thread_counts(case):
    from smtbench.report import mokry_decoder, moore_quirk, moses2_search
    experiment, file, fn, side = {
        "mokry_decoder": ("mokry_decoder", "oracle.jsonl", mokry_decoder.table3_4, lambda r: r.point == "off"),
        "moses2_search": ("moses2_search", "rows.jsonl", moses2_search.table5, lambda r: r.queues == "cardinality"),
        "moore_quirk_ratios": ("moore_quirk", "rows.jsonl", moore_quirk.ratio_table, lambda r: r.variant == "de+ep"),
    }[case]
    bad = rows(experiment, file)
    bad.loc[side(bad), "threads"] = 2
    assert "threads" in refused(fn, bad)


def test_glm_gpu_rows_compare_with_the_trie_without_a_thread_count():
    """A GPU row (threads None) is gLM's own comparison with KenLM's one-thread trie: it keeps its ratio when it was
    timed in the run (synthetic: the committed rows had no GPU)."""
    from smtbench.report import glm_btree
    r = rows("glm_btree", "bible.o5.jsonl")
    trie = r[(r.backend == "kenlm-trie-cpp") & (r.sweep == "table")
             & (pd.to_numeric(r.threads, errors="coerce").fillna(1) == 1)]
    gpu = trie.assign(backend="btree-cuda", path="gpu-kernel", threads=None, qps=trie.qps * 5, gpu="a GPU",
                      model_bytes=1000, node_size=31)
    r = pd.concat([r[~((r.backend == "btree-cuda") & (r.sweep == "table"))], gpu], ignore_index=True)
    t = glm_btree.table3(r, "bible.o5")
    g = t[t.system == "B-tree GPU (kernel)"].iloc[0]
    assert g.vs_kenlm_trie_cpp == pytest.approx(5.0) and g.vs_kenlm_trie_cpp_ci_low == pytest.approx(5.0, rel=1e-3)


# ----------------------------------------------------------------------------------------------- Moses2 live (oracle)

def _peer_timing(system: str, threads: int, wps: list[float], run_id: str = "run-1", **fields) -> list[dict]:
    return [{"experiment": fields.pop("experiment", "decode_normal"), "kind": "peer_timing", "system": system,
             "repeat": i, "threads": threads, "run_id": run_id, "words_per_second": w, "decode_seconds": 1000 / w,
             **fields} for i, w in enumerate(wps)]


def _with_live_moses2(o: pd.DataFrame, peer: str = "moses2", label: str = "Moses2",
                      theirs: tuple[float, ...] = (240.0, 250.0, 245.0)) -> pd.DataFrame:
    q = o[o.kind == "quality"].iloc[-1]
    same = {"search": q.search, "sentences": q.sentences, "model": q.model, "experiment": q.experiment,
            "stack_size": q.stack_size, "pop_limit": q.pop_limit}
    peers = [{"experiment": q.experiment, "kind": "peer", "system": s, "label": lab, "status": "ok", "threads": 1,
              "search": q.search, "sentences": q.sentences, "model": q.model, "stack_size": q.stack_size,
              "pop_limit": q.pop_limit, "bleu": q.bleu, "ours_vs_identical": int(q.sentences),
              "ours_vs_score_ge": int(q.sentences), "ours_vs_ties": 0, "ours_vs_ours_higher": 0,
              "ours_vs_theirs_higher": 0, "command": "moses2 -f moses.ini"}
             for s, lab in (("ours", "ours"), (peer, label))]
    live = (_peer_timing("ours", 1, [600.0, 640.0, 620.0], **same)
            + _peer_timing(peer, 1, list(theirs), **same))
    out = pd.concat([o, pd.DataFrame(peers + live)], ignore_index=True)
    for c in common.MACHINE_KEYS:  # one machine: the run's
        if c in out:
            out[c] = out[c].fillna(q[c])
    return out


def _before_live(o: pd.DataFrame) -> pd.DataFrame:
    """The oracle rows as they were before the live peers (the committed ones are re-measured with them now)."""
    return o[~o.kind.isin(["peer", "peer_timing"])].copy()


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_moses_decode_oracle_table_times_moses2_live_and_labels_the_recorded_runs(search):
    from smtbench.report import moses_decode
    o = _before_live(rows("moses_decode", f"{search}-oracle.jsonl"))
    old = moses_decode.oracle_table(o)  # committed rows, before the live peer: rendered, Moses2 live row, no ratio
    m2 = old[old.system.str.startswith("Moses2") & ~old.system.str.endswith("(recorded)")]
    assert len(m2) == 1 and m2.status.iloc[0].startswith("not timed live") and old.ours_speedup_ci_low.isna().all()
    assert "predate the live peers" in moses_decode.oracle_notes(o)
    t = moses_decode.oracle_table(_with_live_moses2(o))
    live = t[t.timed.fillna("").str.startswith("live")]
    assert list(live.system.str.split(",").str[0]) == ["ours", "Moses2"]
    m2 = live.iloc[1]
    assert m2.ours_speedup_median == pytest.approx(620 / 245) and m2.ours_speedup_ci_low <= m2.ours_speedup_paired \
        <= m2.ours_speedup_ci_high and m2.n_repeats == 3 and m2.threads == 1
    rec = t[t.status == "recorded"]
    assert len(rec) == (2 if search == "normal" else 1) and rec.recorded.str.startswith("recorded, ").all()
    assert rec[[c for c in t.columns if c.startswith("ours_speedup")]].isna().all().all()  # no ratio beside them
    assert rec.recorded_words_per_second.notna().all() and live.recorded_words_per_second.isna().all()
    assert t.in_process_words_per_second.notna().sum() == 1  # ours, timed inside bench moses_decode
    for field, value in (("run_id", "another-run"), ("threads", 2)):
        bad = _with_live_moses2(o)
        bad.loc[(bad.kind == "peer_timing") & (bad.system == "moses2"), field] = value
        assert "ours_speedup" in refused(moses_decode.oracle_table, bad)


def test_moses_decode_oracle_table_times_moses_v1_live_on_fewer_verses():
    from smtbench.report import moses_decode
    o = _with_live_moses2(rows("moses_decode", "normal-oracle.jsonl"))
    m1 = o[o.kind.isin(["quality", "timing"])].copy()
    m1.loc[m1.kind == "quality", "sentences"] = 200
    m1 = _with_live_moses2(m1, "moses", "Moses v1", (110.0, 118.0, 115.0))
    t = moses_decode.oracle_table(o, m1)
    v1 = t[t.system.str.startswith("Moses v1") & t.system.str.contains("own run: first 200 dev verses")].iloc[0]
    assert v1.ours_speedup_median == pytest.approx(640 / 118)  # the median of the per-repeat ratios
    assert v1.ours_speedup_ci_low <= v1.ours_speedup_paired <= v1.ours_speedup_ci_high
    assert v1.timed.startswith("live, own run on the first 200") and v1.sentences == 200
    assert "first 200 dev verses" in moses_decode.oracle_notes(o, m1)
    assert (t.status == "recorded").sum() == 2  # the recorded Moses2 and Moses v1 rows stay, no ratio
    bad = m1.copy()
    bad.loc[(bad.kind == "peer_timing") & (bad.system == "moses"), "run_id"] = "another-run"
    assert "ours_speedup" in refused(moses_decode.oracle_table, o, bad)


def test_moses_decode_report_renders_the_oracle_tables_from_the_committed_rows(tmp_path):
    raw = RAW / "moses_decode"
    if not (raw / "normal-oracle.jsonl").exists():
        pytest.skip("committed rows absent")
    live = _with_live_moses2(_before_live(rows("moses_decode", "cube-oracle.jsonl")))
    live.to_json(tmp_path / "cube-oracle.jsonl", orient="records", lines=True)
    _before_live(rows("moses_decode", "normal-oracle.jsonl")).to_json(tmp_path / "normal-oracle.jsonl",
                                                                     orient="records", lines=True)
    p = subprocess.run([sys.executable, "-m", "smtbench.cli", "report", "moses_decode", "--rows",
                        str(raw / "normal.jsonl"), "--table", str(tmp_path / "n"), "--oracle-rows",
                        str(tmp_path / "normal-oracle.jsonl"), "--oracle-table", str(tmp_path / "no"),
                        "--oracle-cube-rows", str(tmp_path / "cube-oracle.jsonl"), "--oracle-cube-table",
                        str(tmp_path / "co"), "--metrics", str(tmp_path / "m.csv")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "ours_speedup_ci_low" in (tmp_path / "co.csv").read_text()
    assert "predate the live peers" in (tmp_path / "no.md").read_text()
    metrics = (tmp_path / "m.csv").read_text()
    assert "-n1037-moses2" in metrics and "ours_speedup" in metrics


# ----------------------------------------------------------------------------------------------- Moses2 live (scaling)

def _scaling_live(r: pd.DataFrame, m2_run: str = "run-1") -> pd.DataFrame:
    extra = {"experiment": "moses2_scaling", "pop_limit": 400, "stack_size": 400}
    live = (_peer_timing("ours", 1, [5000.0, 5100.0, 5050.0], table="same-model", **extra)
            + _peer_timing("ours", 2, [9800.0, 9900.0, 9850.0], table="same-model", **extra)
            + _peer_timing("moses2", 1, [2600.0, 2650.0, 2625.0], table="ini", run_id=m2_run, **extra)
            + _peer_timing("moses2", 2, [5000.0, 5100.0, 5050.0], table="ini", run_id=m2_run, **extra))
    peers = [{"experiment": "moses2_scaling", "kind": "peer", "system": "moses2", "threads": t, "status": "ok",
              "ours_vs_identical": 1037, "ours_vs_ties": 0, "ours_vs_ours_higher": 0, "command": "moses2"}
             for t in (1, 2)]
    rss = [{"experiment": "moses2_scaling", "kind": "rss", "config": "moses2", "table": "ini", "threads": t,
            "peak_rss_kb": 300000 + t} for t in (1, 2)]
    return pd.concat([r, pd.DataFrame(live + peers + rss)], ignore_index=True)


def test_moses2_scaling_times_moses2_live_at_equal_threads():
    from smtbench.report import moses2_scaling as M
    committed = rows("moses2_scaling", "rows.jsonl")
    live = M.fig3_table(committed, None)  # the committed run timed Moses2 live at both thread counts
    m2 = live[live.series == "moses2 (live)"]
    assert list(m2.threads) == [1, 2] and (m2.status == "ok").all() and (m2.identical_with_ours == 1037).all()
    assert (m2.ours_vs_moses2_ci_low <= m2.ours_vs_moses2_paired).all()
    assert (m2.ours_vs_moses2_paired <= m2.ours_vs_moses2_ci_high).all()
    # the same rows without the live peer (as rows from before it): a Moses2 row per thread, no ratio
    r = committed[~(committed.kind.isin(["peer", "peer_timing"])
                    | ((committed.kind == "rss") & (committed.config == "moses2")))]
    old = M.fig3_table(r, None)
    m2 = old[old.series == "moses2 (live)"]
    assert list(m2.threads) == [1, 2] and m2.status.str.startswith("not timed live").all()
    assert old.ours_vs_moses2.isna().all()
    t = M.fig3_table(_scaling_live(r), None)
    m2 = t[t.series == "moses2 (live)"].set_index("threads")
    assert m2.loc[1].ours_vs_moses2 == pytest.approx(5050 / 2625)
    assert m2.loc[2].ours_vs_moses2_ci_low <= m2.loc[2].ours_vs_moses2_paired <= m2.loc[2].ours_vs_moses2_ci_high
    assert m2.loc[2].moses2_speedup_vs_1_thread == pytest.approx(5050 / 2625)
    assert pd.isna(m2.loc[1].moses2_speedup_vs_1_thread)
    a = M.acceptance(_scaling_live(r), None)
    live = a[a.moses2_source == "live, same sweep"]
    assert live.figure.str.startswith("words/s, 1 thread(s), ours as a process vs Moses2").any()
    assert live.figure.str.startswith("2 threads / 1 thread").any()
    same = live[live.figure.str.contains("the ini's filtered tables binarized")]
    assert len(same) == 2 and same.holds.all()  # ours' peak RSS on the ini's model below Moses2's, measured live
    for field, value in (("run_id", "another-run"), ("clock", "CPUTime")):  # (threads: part of the point's key)
        bad = _scaling_live(r)
        bad.loc[(bad.kind == "peer_timing") & (bad.system == "moses2") & (bad.threads == 1), field] = value
        msg = refused(M.fig3_table, bad, None)
        assert "ours_vs_moses2" in msg or "moses2_speedup_vs_1_thread" in msg


def test_moses2_scaling_report_renders_without_the_oracle(tmp_path):
    r = RAW / "moses2_scaling" / "rows.jsonl"
    if not r.exists():
        pytest.skip("committed rows absent")
    p = subprocess.run([sys.executable, "-m", "smtbench.cli", "report", "moses2_scaling", "--rows", str(r),
                        "--oracle", str(tmp_path / "absent"), "--tables", str(tmp_path), "--figures", str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    fig3 = pd.read_csv(tmp_path / "moses2_fig3.csv")
    assert (fig3[fig3.series == "moses2 (live)"].status == "ok").all()  # live in the rows: no oracle needed
    assert not fig3.series.str.contains("recorded").any()
