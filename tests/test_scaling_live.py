"""Issue 40: `bench moses2_scaling --peers moses2` times Moses2 live at every thread count in the same sweep as our
points, beside ours as a process on the same model, checks both against the single-threaded decoding of the ini's
model first, and measures Moses2's peak RSS; the report divides only like by like. Moses2 here is a stand-in (our
own decoder behind Moses2's command line, under $SMTBENCH_MOSES_BIN), so the test runs on every clone."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

STAND_IN = '''#!{python}
import os, subprocess, sys, tempfile
a = sys.argv[1:]
opt = lambda name: a[a.index(name) + 1]
with tempfile.TemporaryDirectory() as tmp:
    sc, out = os.path.join(tmp, "s"), os.path.join(tmp, "o")
    subprocess.run([sys.executable, "-m", "smtbench.cli", "decode", "cube", "-f", opt("-f"), "-s", opt("-s"),
                    "--pop-limit", opt("-cube-pruning-pop-limit"), "--threads", opt("-threads"), "--scores", sc,
                    "-o", out, "--no-progress"], check=True, stderr=subprocess.DEVNULL)
    for s, h in zip(open(sc), open(out)):
        print(f"{{float(s):.3f}} {{h.strip()}}")
'''


def _smtbench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "smtbench.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def _binarize(pt: str | Path, rt: str | Path, table: Path) -> Path:
    r = _smtbench("tm", "binarize", "--phrase-table", str(pt), "--reordering-table", str(rt), "--reordering",
                  "integrated", "--no-compress", "--out", str(table))
    assert r.returncode == 0, r.stderr
    return table


def _stand_in_moses_bin(tmp_path: Path) -> dict:
    """The environment that puts the stand-in Moses2 (STAND_IN) where moses_peer looks."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "moses2").write_text(STAND_IN.format(python=sys.executable))
    (bindir / "moses2").chmod(0o755)
    return {"SMTBENCH_MOSES_BIN": str(bindir)}


@pytest.mark.slow
def test_moses2_live_at_every_thread_count(small_trained, tmp_path):
    from smtbench.decode.ini import load_ini
    from smtbench.report import moses2_scaling as M
    from smtbench.report.common import read_rows

    ini, _, ref = small_trained
    cfg = load_ini(ini)
    pt, rt = (Path(ini).parent / cfg.feature(f).path for f in ("PhraseDictionaryMemory", "LexicalReordering"))
    table = _binarize(pt, rt, tmp_path / "plain-int.bin")
    env = _stand_in_moses_bin(tmp_path)
    out = tmp_path / "rows.jsonl"
    r = _smtbench("bench", "moses2_scaling", "-f", str(ini), "--input", str(Path(ref).with_suffix(".es")),
                  "--reference", str(ref), "--table", "plain-int", str(table), "--threads", "1,2", "--caches", "0",
                  "--cache", "10", "--pop-limit", "20", "-s", "20", "--sentences", "6", "--repeats", "2",
                  "--max-repeats", "2", "--profile-us", "0", "--rss", "--rss-same-model", str(table),
                  "--peers", "moses2", "--out", str(out), env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    peers = [x for x in rows if x["kind"] == "peer"]
    assert sorted((x["system"], x["threads"]) for x in peers) == [("moses2", 1), ("moses2", 2), ("ours", 1), ("ours", 2)]
    assert all(x["status"] == "ok" and x["ours_vs_identical"] == 6 for x in peers)  # checked before any timing
    timed = [x for x in rows if x["kind"] == "peer_timing" and not x.get("retaken")]
    assert {(x["system"], x["threads"]) for x in timed} == {("moses2", 1), ("moses2", 2), ("ours", 1), ("ours", 2)}
    assert len({x["run_id"] for x in timed}) == 1 and all(x["table"] in ("same-model", "ini") for x in timed)
    rss = [x for x in rows if x["kind"] == "rss" and x["config"] == "moses2"]
    assert sorted(x["threads"] for x in rss) == [1, 2] and all(x["peak_rss_kb"] > 0 for x in rss)
    fig3 = M.fig3_table(read_rows([out]), None)
    live = fig3[fig3.series == "moses2 (live)"]
    assert list(live.threads) == [1, 2] and (live.status == "ok").all()
    assert "ours_vs_moses2_ci_low" in fig3 and "moses2_speedup_vs_1_thread" in fig3


@pytest.mark.slow
def test_binaries_of_another_text_table_load_through_table_source(small_trained, tmp_path):
    """The committed run binarizes the model's full table while the ini names its filtered one: the binary's
    provenance check refuses that pairing in one line unless --table-source names the tables the binaries came
    from (the bench then loads them through an ini naming those tables: in-process points, peak-RSS children and
    ours beside the live peer). Here the other tables are the ini's own, stored uncompressed (same numbers,
    another file)."""
    import gzip

    from smtbench.decode.ini import load_ini

    ini, _, ref = small_trained
    cfg = load_ini(ini)
    plain = []
    for f in ("PhraseDictionaryMemory", "LexicalReordering"):
        src = Path(ini).parent / cfg.feature(f).path
        dst = tmp_path / (src.name.removesuffix(".gz") + ".txt")
        with gzip.open(src, "rb") as fi:
            dst.write_bytes(fi.read())
        plain.append(str(dst))
    table = _binarize(plain[0], plain[1], tmp_path / "plain-int.bin")
    env = _stand_in_moses_bin(tmp_path)
    out = tmp_path / "rows.jsonl"
    cmd = ["bench", "moses2_scaling", "-f", str(ini), "--input", str(Path(ref).with_suffix(".es")),
           "--reference", str(ref), "--table", "plain-int", str(table), "--threads", "1", "--caches", "0",
           "--cache", "10", "--pop-limit", "20", "-s", "20", "--sentences", "4", "--repeats", "1",
           "--max-repeats", "1", "--profile-us", "0", "--rss", "--peers", "moses2", "--out", str(out)]
    r = _smtbench(*cmd, env=env)
    assert r.returncode != 0 and not out.exists()
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "built from another phrase table" in err[0], r.stderr[-2000:]
    r = _smtbench(*cmd, "--table-source", *plain, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {x["system"] for x in rows if x["kind"] == "peer" and x["status"] == "ok"} == {"moses2", "ours"}
    assert {x["config"] for x in rows if x["kind"] == "rss"} >= {"ours", "text", "moses2"}
