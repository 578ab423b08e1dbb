"""The CLI: every group and command builds, machine facts are complete, bad input exits 2 with a message."""
from __future__ import annotations

import json
import subprocess
import sys

from smtbench.cli import build_parser, main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "smtbench.cli", *args], capture_output=True, text=True)


def test_parser_builds_with_all_command_modules():
    parser = build_parser()
    assert "bench" in parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]


def test_machine_json(capsys):
    assert main(["machine"]) == 0
    facts = json.loads(capsys.readouterr().out)
    for key in ("cpu", "cores", "caches", "memory_gib", "huge_pages", "loadavg", "compiler", "cflags",
                "git_sha", "gpu"):
        assert key in facts
    assert facts["gpu"]["available"] or facts["gpu"]["reason"]


def test_bench_hash_rows_and_errors(tmp_path):
    out = tmp_path / "rows.jsonl"
    r = run("bench", "hash", "--table-mib", "1", "--queue-sizes", "0,4", "--lookups", "5000", "--repeats", "1",
            "--mode", "hit,miss", "--max-retakes", "0", "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # 2 modes x 2 queue sizes, plus the random-line floor row
    assert len(rows) == 5 and {r["queue_size"] for r in rows} == {0, 4}
    assert [r["mode"] for r in rows].count("line") == 1
    bad = run("bench", "hash", "--table-mib", "1", "--load-factor", "1.5", "--out", str(tmp_path / "x.jsonl"))
    assert bad.returncode == 2 and "--load-factor 1.5: must be in" in bad.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_guard_reports_a_kill(tmp_path):
    r = run("guard", "--what", "a doomed step", "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert r.returncode == 137
    assert "a doomed step failed" in r.stderr and "out-of-memory" in r.stderr
    ok = run("guard", "--what", "fine", "--", sys.executable, "-c", "pass")
    assert ok.returncode == 0 and ok.stderr == ""


def test_report_with_a_bad_counts_table_makes_no_folder(tmp_path, capsys):
    """A report verb checks --counts before it writes anything: one line, exit 2, no (empty) output folder."""
    from pathlib import Path

    rows = Path(__file__).resolve().parents[1] / "results" / "raw" / "glm_btree" / "bible.o3.jsonl"
    if not rows.exists():
        import pytest
        pytest.skip(f"{rows} absent")
    out = tmp_path / "out"
    assert main(["report", "glm_btree", "--rows", str(rows), "--counts", str(tmp_path / "BAD"),
                 "--tables", str(out / "tables"), "--figures", str(out / "figures")]) == 2
    err = capsys.readouterr().err.strip()
    assert "BAD: cannot read" in err and "\n" not in err
    assert not out.exists()
