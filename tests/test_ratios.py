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

def test_glm_table3_refuses_another_runs_trie_and_gives_multi_thread_rows_no_ratio():
    from smtbench.report import glm_btree
    r = rows("glm_btree", "bible.o5.jsonl")
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
    r = _with_two_thread_peers(rows("glm_btree", "bible.o5.jsonl"))
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
    """Without a 2-thread peer (the committed rows: KenLM timed at 1 thread) the 2-thread rows carry no KenLM ratio;
    the checks themselves refuse a peer whose rows' thread count is not the row's."""
    from smtbench.report import glm_btree
    from smtbench.report.common import check_like
    r = rows("glm_btree", "bible.o5.jsonl")
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
    vs = mokry_hash.vs_kenlm(r)  # KenLM's CPUTime() against rows of ours with no CPU time yet: no ratio, re-measure
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
    proj = t4.partitions > 1
    assert t4.loc[proj, "critical_path"].str.startswith("projected").all()
    assert t4.loc[proj, ["speedup_vs_sort", "speedup_vs_moses", "vs_single_run"]].isna().all().all()
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
    trie = r[(r.backend == "kenlm-trie-cpp") & (r.sweep == "table")]
    gpu = trie.assign(backend="btree-cuda", path="gpu-kernel", threads=None, qps=trie.qps * 5, gpu="a GPU",
                      model_bytes=1000, node_size=31)
    r = pd.concat([r[~((r.backend == "btree-cuda") & (r.sweep == "table"))], gpu], ignore_index=True)
    t = glm_btree.table3(r, "bible.o5")
    g = t[t.system == "B-tree GPU (kernel)"].iloc[0]
    assert g.vs_kenlm_trie_cpp == pytest.approx(5.0) and g.vs_kenlm_trie_cpp_ci_low == pytest.approx(5.0, rel=1e-3)
