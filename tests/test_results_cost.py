"""Issue 40: every rule gets a Snakemake `benchmark:` record (workflow/Snakefile), and the results index lists what
each experiment's jobs cost on this machine ("Cost on this machine": experiment, jobs, total minutes, which records),
so a user knows what a reproduction costs before starting it. Synthetic records; the Snakefile's assignment is
checked on a dry run's job list."""
from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT
from smtbench.report import index

HEAD = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def record(path, *seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEAD + "".join(f"{s:.2f}\t0:00:00\t1\t1\t1\t1\t0\t0\t0\t{s:.2f}\n" for s in seconds))


def test_cost_sums_each_experiments_records(tmp_path):
    b = tmp_path / "benchmarks"
    record(b / "mokry_lm" / "mokry_lm_bench" / "bible.o5.tsv", 600.0)
    record(b / "mokry_lm" / "mokry_lm_bench" / "synth.o3.tsv", 300.0)
    record(b / "mokry_lm" / "mokry_lm_report.tsv", 30.0, 90.0)  # a repeated record: its mean
    record(b / "data" / "data_prepare.tsv", 120.0)
    (b / "empty").mkdir()
    rows = {r["experiment"]: r for r in index.cost(tmp_path)}
    assert set(rows) == {"mokry_lm", "data"}
    assert rows["mokry_lm"]["jobs"] == 3 and rows["mokry_lm"]["minutes"] == pytest.approx(16.0)
    assert rows["data"]["records"] == "benchmarks/data/"
    text = index.build(tmp_path, "default")
    assert "## Cost on this machine" in text
    assert "| mokry_lm | 3 | 16.0 | `benchmarks/mokry_lm/`" in text and "| **all** | 4 | 18.0 | |" in text


def test_no_records_no_section_and_a_bad_record_is_one_line(tmp_path):
    assert "Cost on this machine" not in index.build(tmp_path, "default")
    bad = tmp_path / "benchmarks" / "x" / "r.tsv"
    bad.parent.mkdir(parents=True)
    bad.write_text("seconds\n1\n")
    with pytest.raises(ValueError, match=r"r\.tsv:1: not a Snakemake benchmark record"):
        index.cost(tmp_path)
    bad.write_text(HEAD + "oops\t0\n")
    with pytest.raises(ValueError, match=r"r\.tsv:2: no seconds"):
        index.cost(tmp_path)


def test_every_rule_writes_a_benchmark_record():
    """A forced dry run of the smoke grid: every job but `all` names its benchmark record, under
    build/smoke/benchmarks/<rule file>/<rule>... (workflow/Snakefile sets them after the rules are defined)."""
    import re

    p = subprocess.run([str(ROOT / ".venv" / "bin" / "snakemake"), "--profile", "workflow/profiles/smoke", "-n",
                        "--forceall"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    jobs = re.split(r"\n(?=(?:local)?rule \S+:\n)", p.stdout + p.stderr)
    seen = 0
    for job in jobs:
        m = re.match(r"(?:local)?rule (\S+):\n", job)
        if not m or m.group(1) in ("all", "results_index"):  # the index cannot count its own record
            continue
        seen += 1
        b = re.search(r"\n    benchmark: (\S+)", job)
        assert b and "/benchmarks/" in b.group(1) and m.group(1) in b.group(1), job[:400]
    assert seen > 20
