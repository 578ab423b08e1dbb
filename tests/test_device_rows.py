"""tools/device-rows.sh, issue 43's device rows (gLM's GPU rows, a 1-16-thread sweep of our cube pruning beside
Moses2): its CPU part here in the dry mode (kit prepared from the Moses oracle, the C driver built, 20 verses at 1 and
2 threads, the gLM CPU points, the CUDA build where nvcc is, its GPU row saying why none ran), every number checked
against the plain paths live: the driver's translations against smtbench's CubeDecoder on the same ini, its B-tree's
log10 sum against smtbench.lm.btree's. About a minute (the kit's xz and the build)."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import HAVE_ORACLE, ORACLE, ROOT

pytestmark = pytest.mark.skipif(not HAVE_ORACLE or shutil.which("cc") is None,
                                reason="needs the Moses oracle (../shared) and a C compiler")
N = 20


@pytest.fixture(scope="module")
def dry(tmp_path_factory):
    from smtbench import moses_peer

    tmp = tmp_path_factory.mktemp("device-rows")
    kit, out = tmp / "kit", tmp / "out"
    extra = [] if moses_peer.available("moses2") else ["--no-moses2"]
    r = subprocess.run([sys.executable, "tools/device/prepare.py", "--kit", str(kit), "--oracle", str(ORACLE),
                        "--sentences", "500", *extra], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads((kit / "kit.json").read_text())["moses2"] == (None if extra else "bin/moses2")
    env = {**os.environ, "DEVICE_KIT": str(kit), "TMPDIR": str(tmp)}
    r = subprocess.run(["bash", "tools/device-rows.sh", "--dry", str(out)], cwd=ROOT, capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in (out / "device-rows.jsonl").read_text().splitlines()]
    with tarfile.open(out / "device-outputs.tar.xz") as tf:
        tf.extractall(tmp / "outputs", filter="data")
    return rows, tmp / "outputs", bool(extra), out


def test_dry_rows_name_the_machine_build_and_kit(dry) -> None:
    rows, _, _, _ = dry
    assert rows[0]["kind"] == "run" and rows[-1]["kind"] == "end" and rows[-1]["repeats_done"] == 1
    for r in rows:
        assert r["dry"] is True and r["cores"] >= 1 and r["cpu_model"] is not None
        assert r["build"].startswith("cc -std=c11 -O3") and r["kit_sha"]
    gpu = [r for r in rows if r.get("kind") == "glm_gpu"]
    assert len(gpu) == 1 and gpu[0]["available"] is False and gpu[0]["reason"]  # no GPU here: said, not invented
    assert not [r for r in rows if r.get("path", "").startswith("gpu")]


def test_dry_glm_sum_equals_the_python_btree(dry) -> None:
    import numpy as np

    from smtbench.lm.btree import BTreeLM

    rows, _, _, _ = dry
    model = [r for r in rows if r.get("kind") == "glm_model"][0]
    lm = BTreeLM.from_arpa(ORACLE / "lm-en5.arpa.xz", model["node_size"])
    lines = (ORACLE / "dev.en").read_text(encoding="utf-8").split("\n")[:-1]
    q, _, _ = lm.sentence_queries(lines)
    reps = -(-20000 // len(q))
    assert model["queries"] == len(q) * reps and model["model_bytes"] == lm.nbytes
    p = lm.query(q)
    total = float(np.asarray(p[0] if isinstance(p, tuple) else p, dtype=np.float64).sum()) * reps
    assert model["log10_sum"] == pytest.approx(total, rel=1e-9)
    cpu = [r for r in rows if r.get("kind") == "glm_point"]
    assert {(r["path"], r["threads"]) for r in cpu} == {("cpu", 1), ("cpu", os.cpu_count())}


def test_dry_translations_equal_the_cube_decoder(dry, oracle_model) -> None:
    from smtbench.decode.cube import CubeDecoder

    rows, outputs, no_moses2, _ = dry
    src = (ORACLE / "dev.es").read_text(encoding="utf-8").split("\n")[:N]
    dec = CubeDecoder(oracle_model, pop_limit=400, stack_size=400)
    best = [dec.translate(s).best for s in src]
    lines = (outputs / "ours-t1.out").read_text(encoding="utf-8").split("\n")[:-1]
    scores = [float(x) for x in (outputs / "ours-t1.scores").read_text().split()]
    assert lines == [b.text for b in best]
    assert scores == [b.search_score for b in best]  # %.17g: the same double
    peer = {(r["system"], r["threads"]): r for r in rows if r.get("kind") == "peer" and "threads" in r}
    assert peer[("ours", 2)]["identical_to_ours_t1"] == N
    timing = {(r["system"], r["threads"]) for r in rows if r.get("kind") == "peer_timing"}
    if no_moses2:
        assert timing == {("ours", 1), ("ours", 2)}
        return
    assert timing == {(s, t) for s in ("ours", "moses2") for t in (1, 2)}
    for t in (1, 2):
        assert peer[("moses2", t)]["peer_scores_above_ours"] == 0
    m2 = [line.partition(" ")[2].strip() for line in
          (outputs / "moses2-t1.out").read_text(encoding="utf-8").split("\n")[:-1]]
    assert sum(a == b for a, b in zip(m2, lines)) == peer[("moses2", 1)]["identical_to_ours"] == N


def test_refusals_are_one_line(tmp_path) -> None:
    r = subprocess.run(["bash", "tools/device-rows.sh", "--bogus"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--bogus" in r.stderr
    r = subprocess.run(["bash", "tools/device-rows.sh", "--dry", str(tmp_path / "o")], cwd=ROOT, capture_output=True,
                       text=True, env={**os.environ, "DEVICE_KIT": str(tmp_path / "nokit")})
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "--prepare" in r.stderr
    assert not (tmp_path / "o").exists()
    r = subprocess.run([sys.executable, "tools/device/prepare.py", "--kit", str(tmp_path / "k"), "--oracle",
                        str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "missing" in r.stderr
    assert not (tmp_path / "k").exists()


def test_the_driver_refuses_bad_options_and_files(tmp_path) -> None:
    exe = tmp_path / "device_rows"
    srcs = sorted(str(p) for p in (ROOT / "csrc").glob("*/*.c"))
    subprocess.run(["cc", "-std=c11", "-O1", "-pthread", "-Icsrc", "tools/device/device_rows.c", *srcs, "-o", str(exe),
                    "-lm"], cwd=ROOT, check=True)
    bad_arpa = tmp_path / "bad.arpa"
    bad_arpa.write_text("\\data\\\nngram 1=2\n\n\\1-grams:\n-1.0\t<s>\n")
    with gzip.open(ORACLE / "phrase-table.dev.gz", "rt", encoding="utf-8") as fh:
        pt = tmp_path / "pt"
        pt.write_text("".join(next(fh) for _ in range(3)))
    w = ",".join(["0.1"] * 15)
    cases = [
        (["decode", "--lm", str(bad_arpa), "--phrases", str(pt), "--weights", w], f"{bad_arpa}:"),
        (["decode", "--lm", str(tmp_path / "none"), "--phrases", str(pt), "--weights", w], str(tmp_path / "none")),
        (["decode", "--lm", str(bad_arpa), "--phrases", str(pt), "--weights", "1,2"], "--weights"),
        (["decode", "--lm", str(bad_arpa), "--phrases", str(pt), "--weights", w, "--threads", "0"], "--threads"),
        (["decode", "--lm", str(bad_arpa), "--phrases", str(pt), "--weights", w, "-s", "x"], "-s"),
        (["glm", "--lm", str(bad_arpa), "--text", str(pt), "--node-size", "2"], "--node-size"),
        (["glm", "--lm", str(bad_arpa), "--text", str(pt)], f"{bad_arpa}:"),
        (["nothing"], "usage"),
    ]
    for argv, needle in cases:
        r = subprocess.run([str(exe), *argv], input="", capture_output=True, text=True)
        assert r.returncode in (1, 2), argv
        assert needle in r.stderr and r.stdout == "", (argv, r.stderr)
        assert r.stderr.count("\n") == (2 if argv == ["nothing"] else 1), (argv, r.stderr)


def _import(src: Path, results: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "tools/device-rows.sh", "--import", str(src), "--results", str(results), *extra],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHON": sys.executable})


def test_import_and_the_reports_tables(dry, tmp_path) -> None:
    from smtbench.report.common import declared_for, ratio_columns_of, read_rows
    from smtbench.report.glm_btree import device_table
    from smtbench.report.moses2_scaling import device_threads

    rows, _, no_moses2, out = dry
    r = _import(out, tmp_path / "results")
    assert r.returncode == 1 and "dry run" in r.stderr and r.stderr.count("\n") == 1  # a dry run is not committed
    assert not (tmp_path / "results" / "raw").exists()
    if any(r.get("system") == "moses2" for r in rows):  # a Moses2 line above ours: the identity rule refuses it
        d = tmp_path / "above"
        d.mkdir()
        shutil.copy(out / "device-rows.jsonl", d)
        with tarfile.open(out / "device-outputs.tar.xz") as tf:
            tf.extractall(d / "x", filter="data")
        m2 = (d / "x" / "moses2-t1.out").read_text(encoding="utf-8").split("\n")
        score, _, hyp = m2[0].partition(" ")
        m2[0] = f"{float(score) + 1:.3f} {hyp}"
        (d / "x" / "moses2-t1.out").write_text("\n".join(m2), encoding="utf-8")
        with tarfile.open(d / "device-outputs.tar.xz", "w:xz") as tf:
            for f in sorted((d / "x").iterdir()):
                tf.add(f, arcname=f.name)
        r = _import(d, tmp_path / "results", "--allow-dry")
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and "moses2" in r.stderr.lower(), r.stderr
        assert not (tmp_path / "results" / "raw").exists()
    r = _import(out, tmp_path / "results", "--allow-dry")
    assert r.returncode == 0, r.stderr
    g = read_rows([tmp_path / "results/raw/glm_btree/device.jsonl"], "glm_btree")
    m = read_rows([tmp_path / "results/raw/moses2_scaling/device.jsonl"], "moses2_scaling")
    assert len(g) + len(m) == len(rows) + 2  # the run and end rows go to both
    assert set(g["run_id"]) == set(m["run_id"]) == {rows[0]["device_run"]} and set(g["clock"]) == {"wall"}
    gt, mt = device_table(g), device_threads(m)
    assert list(gt["system"]) == ["B-tree CPU (1 thread)", "B-tree CPU (all cores)", "B-tree GPU (kernel)",
                                  "B-tree GPU (with copies)"]
    assert gt["qps"].iloc[0] > 0 and gt["vs_device_cpu_1"].iloc[0] == 1 and gt["n_repeats"].iloc[1] == 10
    assert gt["qps"].iloc[2].startswith("no GPU")  # the reason, not a number
    assert list(mt["threads"]) == [1, 2] and (mt["ours_identical_to_1_thread"] == N).all()
    if not no_moses2:
        assert (mt["moses2_identical_lines"] == N).all() and (mt["moses2_above_ours"] == 0).all()
        assert m[(m["kind"] == "peer") & (m["system"] == "moses2") & (m["threads"] == 1)]["ours_vs_theirs_higher"
                                                                                       ].iloc[0] == 0
    for stem, t in (("glm_device", gt), ("moses2_device_threads", mt)):  # every ratio printed is declared
        assert ratio_columns_of(t.columns) <= declared_for(stem), stem
    nl = device_table(None), device_threads(None)
    assert (nl[0]["qps"] == "not lent").all() and (nl[1]["ours_wps"] == "not lent").all()


def test_import_refuses_cut_and_mixed_runs(dry, tmp_path) -> None:
    rows, _, _, out = dry
    lines = (out / "device-rows.jsonl").read_text().splitlines()
    cases = {
        "cut": "\n".join(lines[:-1]) + "\n",  # no end row: the run was cut off
        "mixed": "\n".join(lines + [lines[-1].replace(rows[0]["device_run"], "other-run")]) + "\n",
        "json": "\n".join(lines[:3] + ["{not json"] + lines[3:]) + "\n",
    }
    for name, text in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "device-rows.jsonl").write_text(text)
        shutil.copy(out / "device-outputs.tar.xz", d)
        r = _import(d, tmp_path / "results", "--allow-dry")
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and "device-rows.jsonl" in r.stderr, (name, r.stderr)
    assert not (tmp_path / "results" / "raw").exists()
