"""Moore & Quirk's Moses table with Moses timed live (issue 40): `bench moore_quirk --live-peers` runs Moses2 and
Moses v1 (here stand-ins in $SMTBENCH_MOSES_BIN: print a fixed 'SCORE HYP' line per input line, sleeping per line
so that the whole input takes longer than its first line) as points of the same repeat loop as ours, on the toy
model; the report prints their time_ratio_vs_de+ep with an interval only for rows of one run, thread count and
clock, and still renders the committed rows of before (recorded Moses rows: labelled, no ratio)."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

from smtbench.errors import UnlikeRatio
from smtbench.report import moore_quirk as mq

ROOT = Path(__file__).resolve().parents[1]
FAKE_MOSES = """#!{py}
import sys, time
lines = sys.stdin.read().splitlines()
time.sleep(0.02 * len(lines))
sys.stdout.write("".join("-1000.000 a\\n" for _ in lines))
"""


@pytest.fixture(scope="module")
def live_rows(tmp_path_factory) -> pd.DataFrame:
    from toy_models import toy_phrase_model

    from smtbench.cli import build_parser

    d = tmp_path_factory.mktemp("mq-live")
    ini = toy_phrase_model(d)
    (d / "in.txt").write_text("".join(f"s{i % 8} s{(i + 3) % 8} s{(i + 5) % 8}\n" for i in range(6)))
    (d / "ref.txt").write_text("a b c\n" * 6)
    bin_dir = d / "bin"
    bin_dir.mkdir()
    for prog in ("moses2", "moses"):
        (bin_dir / prog).write_text(FAKE_MOSES.format(py=sys.executable))
        (bin_dir / prog).chmod(0o755)
    mp = pytest.MonkeyPatch()
    mp.setenv("SMTBENCH_MOSES_BIN", str(bin_dir))
    try:
        args = build_parser().parse_args([
            "bench", "moore_quirk", "-f", str(ini), "--input", str(d / "in.txt"), "--reference", str(d / "ref.txt"),
            "--mode", "moses", "--variants", "de+ep", "--thresholds", "1,2", "--limits", "2,4",
            "--peers", "normal:10,cube:10", "--live-peers", "moses2,moses", "--moses1-sentences", "3",
            "--repeats", "3", "--spell-probe-mib", "0", "--out", str(d / "rows.jsonl")])
        assert args.func(args) == 0
    finally:
        mp.undo()
    return pd.DataFrame([json.loads(x) for x in (d / "rows.jsonl").read_text().splitlines()])


def test_live_moses_points_share_the_run_of_ours(live_rows):
    r = live_rows
    peer = r[r.kind == "moses_peer"].set_index("config")
    assert set(peer.index) == {"m2-normal10", "m2-cube10", "m1-normal10", "m1-normal10-edc"}
    assert (peer.status == "ok").all() and (peer.threads == 1).all()
    assert peer.loc["m1-normal10-edc", "command"].endswith("-early-distortion-cost")
    assert "-n-best-list" not in " ".join(peer.command)
    assert peer.sentences.to_dict() == {"m2-normal10": 6, "m2-cube10": 6, "m1-normal10": 3, "m1-normal10-edc": 3}
    assert (peer.identity_ours_higher == peer.sentences).all()  # the stand-in's score is far below ours
    timing = r[r.kind == "moses_timing"]
    assert sorted(timing.groupby("config").repeat.apply(sorted).iloc[0]) == [0, 1, 2]
    ours = r[r.kind.isna() & (r.repeat >= 1)]
    assert set(timing[timing.repeat >= 1].run_id) == set(ours.run_id) and ours.run_id.nunique() == 1
    assert (r[r.kind.isna()].head_sentences == 3).all()  # ours on Moses v1's verses, from the same passes


def test_live_moses_rows_carry_the_ratio_with_an_interval(live_rows):
    t = mq.moses_table(live_rows).set_index("config")
    for cfg in ("m2-normal10", "m2-cube10", "m1-normal10", "m1-normal10-edc"):
        row = t.loc[cfg]
        assert row.system.endswith("(live)") and row["time_ratio_vs_de+ep"] > 0
        assert row["time_ratio_vs_de+ep_ci_low"] <= row["time_ratio_vs_de+ep_paired"] \
            <= row["time_ratio_vs_de+ep_ci_high"]
        assert row.n_repeats == 3
    assert t.loc["m1-normal10", "verses"] == 3 and "same first 3 verses" in t.loc["m1-normal10", "timed_by"]


@pytest.mark.parametrize("field, value", [("run_id", "another-run"), ("threads", 2), ("clock", "cpu")])
def test_live_moses_ratio_refused_across_runs_threads_or_clocks(live_rows, field, value):
    bad = live_rows.copy()
    bad.loc[(bad.kind == "moses_timing") & (bad.config == "m2-cube10"), field] = value
    with pytest.raises(UnlikeRatio) as e:
        mq.moses_table(bad)
    assert field in str(e.value) and "\n" not in str(e.value) and "m2-cube10" in str(e.value)


def test_live_moses_timed_outside_the_repeat_loop_carries_no_ratio(live_rows):
    """Moses rows without a run id (timed outside the run's repeat loop) beside ours timed in it: shown, no ratio."""
    r = live_rows.copy()
    r.loc[r.kind == "moses_timing", "run_id"] = None
    t = mq.moses_table(r).set_index("config")
    assert t.loc["m2-cube10", "ms_per_word"] > 0 and math.isnan(t.loc["m2-cube10", "time_ratio_vs_de+ep"])
    assert math.isnan(t.loc["m2-cube10", "time_ratio_vs_de+ep_ci_low"])


def test_not_built_moses_is_a_row_saying_so(live_rows):
    r = live_rows[live_rows.kind != "moses_timing"].copy()
    r.loc[r.kind == "moses_peer", "status"] = "not built (make moses)"
    t = mq.moses_table(r).set_index("config")
    assert t.loc["m2-normal10", "timed_by"] == "this run: not built (make moses)"
    assert math.isnan(t.loc["m2-normal10", "time_ratio_vs_de+ep"])


def test_committed_rows_still_render(tmp_path):
    """The committed rows render: our rows keep their ratio; Moses2 and Moses v1 live (same repeat loop) carry theirs
    with an interval, or say why not (a BLEU above DE+EP's hull on their verses); the oracle's recorded Moses rows
    (where ../shared is present) are labelled and carry none; the note says so."""
    from conftest import HAVE_ORACLE, ORACLE

    from smtbench.report.common import read_rows, write_table
    rows = read_rows([ROOT / "results" / "raw" / "moore_quirk" / "moses.jsonl"], "moore_quirk")
    t = mq.moses_table(rows, str(ORACLE) if HAVE_ORACLE else None)
    ours = t[t.system.str.startswith("ours: ")]
    assert len(ours) == 2 and (ours["time_ratio_vs_de+ep"] > 0).all()
    live = t[t.system.str.endswith("(live)")]
    assert len(live) == 4
    m2 = live[live.config.str.startswith("m2-")]
    # the peer identity rule (decode.compare.peer_identity): every line identical or tied, none above the other
    assert (m2["time_ratio_vs_de+ep"] > 0).all()
    assert m2.identity_with_ours.str.contains(r"0 ours higher, 0 moses2 higher \(of 1037;").all()
    assert (m2["time_ratio_vs_de+ep_ci_low"] <= m2["time_ratio_vs_de+ep_paired"]).all()
    assert ((live["time_ratio_vs_de+ep"] > 0) | live.timed_by.str.contains("tops out at BLEU")).all()
    rec = t[~t.system.str.startswith("ours: ") & ~t.system.str.endswith("(live)")]
    assert len(rec) == (4 if HAVE_ORACLE else 0)
    assert rec.timed_by.str.startswith("recorded, ").all() and rec["time_ratio_vs_de+ep"].isna().all()
    write_table(t, tmp_path / "moses", "t", notes=mq.MOSES_NOTES)
    assert "`(recorded)` rows" in (tmp_path / "moses.md").read_text()


@pytest.mark.slow
def test_real_moses_live_on_the_oracle(tmp_path):
    """Moses2 and Moses v1 themselves (where built) on the oracle's model, 4 dev verses: Moses2's lines pass the
    identity rule against ours at the same settings (strict: it would have stopped the run), Moses v1 runs plain and
    with -early-distortion-cost on the first 3, and the table prints their ratios."""
    from conftest import HAVE_ORACLE, ORACLE

    from smtbench import moses_peer
    from smtbench.cli import build_parser
    if not HAVE_ORACLE:
        pytest.skip("Moses oracle not present")
    missing = [p for p in ("moses2", "moses") if not moses_peer.available(p)]
    if missing:
        pytest.skip(f"Moses' {', '.join(missing)} not built in {moses_peer.bin_dir()} (make moses)")
    out = tmp_path / "rows.jsonl"
    cwd = Path.cwd()
    import os
    os.chdir(ORACLE)  # the ini's relative paths, as the rule runs it
    try:
        args = build_parser().parse_args([
            "bench", "moore_quirk", "-f", "moses.ini", "--input", "dev.es", "--reference", "dev.en", "--mode",
            "moses", "--variants", "de+ep", "--thresholds", "1", "--limits", "5", "--peers", "normal:50,cube:50",
            "--live-peers", "moses2,moses", "--moses1-sentences", "3", "--sentences", "4", "--repeats", "2",
            "--spell-probe-mib", "0", "--out", str(out)])
        assert args.func(args) == 0
    finally:
        os.chdir(cwd)
    r = pd.DataFrame([json.loads(x) for x in out.read_text().splitlines()])
    peer = r[r.kind == "moses_peer"].set_index("config")
    assert (peer.status == "ok").all() and (peer.loc[["m2-normal50", "m2-cube50"], "identity_theirs_higher"] == 0).all()
    assert "-early-distortion-cost" in peer.loc["m1-normal50-edc", "command"]
    assert (peer.allocator.str.len() > 0).all()
    t = mq.moses_table(r).set_index("config").loc[["m2-normal50", "m2-cube50", "m1-normal50", "m1-normal50-edc"]]
    # on 3-4 verses a repeat's whole-input run can take less than its first-line run (noise: no time that repeat);
    # every row with a time and a hull reading carries its ratio
    timed = t.ms_per_word.notna() & t["de+ep_ms_per_word"].notna()
    assert timed.any() and (t.loc[timed, "time_ratio_vs_de+ep"] > 0).all()


@pytest.mark.parametrize("programs, peers, message", [
    (["moses"], ["cube:400"], "--live-peers moses: no setting to run it at"),
    (["moses2"], [], "--live-peers moses2: no setting to run it at (--peers none"),
    (["kenlm"], ["normal:1"], "--live-peers kenlm: moses2 or moses"),
])
def test_live_configs_and_bad_live_peers(programs, peers, message):
    from smtbench.experiments.moore_quirk import live_configs
    got = live_configs(["moses2", "moses"], ["normal:200", "cube:400"], 200)
    assert [(c.config, c.sentences) for c in got] == [("m2-normal200", 0), ("m2-cube400", 0), ("m1-normal200", 200),
                                                      ("m1-normal200-edc", 200)]
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        live_configs(programs, peers, 0)
