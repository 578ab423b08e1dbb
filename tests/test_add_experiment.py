"""CONTRIBUTING's "Add an experiment" (issue 39): a toy experiment made of the files that section lists, and nothing
else, in a copy of the checkout, runs through the workflow's smoke grid: its `bench` and `report` verbs exist, its
config block is checked against its declaration, its rule file is included, its table is written."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOY_EXPERIMENT = '''"""`smtbench bench toy`: the sum of squares below n, by a loop and by the closed form (CONTRIBUTING's example)."""
from __future__ import annotations

import argparse
import time

from .frame import Sweep, Verb, arg, protocol

VERBS = (
    Verb("toy", help="the sum of squares: a loop against the closed form",
         settings=(
             arg("--sizes", default="1000,10000", config=True, grid=True, help="values of n"),
             protocol(repeats=2),
             arg("--out", required=True, help="rows (JSON lines)"),
         )),
)


def closed_form(n: int) -> int:
    return (n - 1) * n * (2 * n - 1) // 6


def main(args: argparse.Namespace) -> int:
    from .harness import Protocol, must_agree, rows as open_rows

    sizes = [int(x) for x in args.sizes.split(",")]
    with open_rows("toy", args.out) as rows:
        def time_point(rep: int, point: tuple[int, str]) -> float:
            n, how = point
            t0 = time.perf_counter_ns()
            total = sum(i * i for i in range(n)) if how == "loop" else closed_form(n)
            ns = time.perf_counter_ns() - t0
            must_agree(total == closed_form(n), f"toy: the {how} gives {total} at n={n}")
            rows.emit(size=n, how=how, repeat=rep, elapsed_ns=ns, total=total)
            return ns

        points = [(n, how) for n in sizes for how in ("loop", "formula")]
        Sweep("toy", Protocol.from_args(args), rows).points(points, time_point, key=lambda p: f"{p[1]}/{p[0]}").run()
    return 0
'''

TOY_RULES = '''# The toy experiment (CONTRIBUTING: Add an experiment): the sum of squares, a loop against the closed form.
if "toy" in GRID:
    TOY = GRID["toy"]
    ALL += [f"{OUT}/tables/toy.md"]

    rule toy_bench:
        conda: CONDA_ENV
        output:
            f"{OUT}/raw/toy/rows.jsonl",
        params:
            sizes=",".join(map(str, TOY["sizes"])),
            repeats=TOY["repeats"],
            protocol=protocol_args("toy"),
        threads: BENCH_THREADS
        resources:
            bench=1,
        log:
            f"{OUT}/logs/toy/bench.log",
        shell:
            "smtbench bench toy --sizes {params.sizes} --repeats {params.repeats} {params.protocol} "
            "--out {output} 2> {log}"

    rule toy_report:
        conda: CONDA_ENV
        input:
            rules.toy_bench.output,
        output:
            f"{OUT}/tables/toy.md",
            f"{OUT}/tables/toy.csv",
        params:
            stem=lambda wildcards, output: output[0].removesuffix(".md"),
        log:
            f"{OUT}/logs/toy/report.log",
        shell:
            "smtbench report toy --rows {input} --table {params.stem} 2> {log}"
'''

TOY_REPORT = '''"""`smtbench report toy`: the toy experiment's table (its best time per size and way)."""
from __future__ import annotations

import argparse

from ..experiments.frame import Verb, arg

VERBS = (
    Verb("toy", help="the toy experiment's table",
         settings=(
             arg("--rows", nargs="+", required=True, help="`bench toy` rows"),
             arg("--table", required=True, help="the table's path without .md/.csv"),
         )),
)


def main(args: argparse.Namespace) -> int:
    from .common import read_rows, write_table

    rows = read_rows(args.rows, "toy")
    best = rows.groupby(["size", "how"], as_index=False)["elapsed_ns"].min()
    write_table(best, args.table, "The sum of squares: best time per size")
    return 0
'''

TOY_NOTEBOOK = json.dumps({
    "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
               "source": ["import pandas as pd\n", "pd.read_csv('../results/tables/toy.csv')"]}],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4, "nbformat_minor": 5}, indent=1)

TOY_FILES = {"pylib/smtbench/experiments/toy.py": TOY_EXPERIMENT, "workflow/rules/toy.smk": TOY_RULES,
             "pylib/smtbench/report/toy.py": TOY_REPORT, "notebooks/toy.ipynb": TOY_NOTEBOOK}
TOY_CONFIG = "\ntoy:  # the toy experiment (tests/test_add_experiment.py)\n  sizes: [100, 2000]\n  repeats: 2\n"


def listed_files() -> tuple[list[str], str]:
    """The files CONTRIBUTING's "Add an experiment" lists (`<name>` as in the paths) and its config file."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Add an experiment"):]
    section = section[:section.index("\n## ", 5)]
    items = re.findall(r"^\d+\. `([^`]+)`", section, re.M)
    files = [p for p in items if "<name>" in p]
    config = [p for p in items if p.startswith("config/")]
    assert len(config) == 1, items
    return files, config[0]


def test_contributing_lists_four_files_and_a_config_block():
    files, config = listed_files()
    assert len(files) == 4, files
    assert sorted(f.replace("<name>", "toy") for f in files) == sorted(TOY_FILES), files
    assert config.startswith("config/") and config.endswith(".yaml")


def _copy_checkout(dest: Path) -> None:
    """Tracked and untracked (not ignored) files, and the built C extension (an ignored build output)."""
    r = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                       check=True)
    for name in r.stdout.decode().split("\0"):
        src = ROOT / name
        if name and src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    for so in (ROOT / "pylib" / "smtbench").glob("_native*.so"):
        shutil.copy2(so, dest / "pylib" / "smtbench" / so.name)


def test_a_toy_experiment_from_the_list_runs_through_the_smoke_grid(tmp_path):
    if shutil.which("snakemake") is None or shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs snakemake and a git checkout")
    if not list((ROOT / "pylib" / "smtbench").glob("_native*.so")):
        pytest.skip("the C extension is not built in this checkout")
    copy = tmp_path / "checkout"
    _copy_checkout(copy)
    for path, text in TOY_FILES.items():  # the four files...
        (copy / path).write_text(text)
    _, config = listed_files()
    with open(copy / config.replace("<grid>", "smoke"), "a") as fh:  # ...and the config block
        fh.write(TOY_CONFIG)
    env = dict(os.environ, PYTHONPATH=str(copy / "pylib"), SMTBENCH_SHARED=str(tmp_path / "no-shared"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    # the verbs, from the declarations
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "bench", "toy", "--help"], cwd=copy, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "--sizes" in r.stdout, r.stderr[-2000:]
    # the smoke grid, targeted at the toy's table
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "build/smoke/tables/toy.md"],
                       cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    rows = [json.loads(line) for line in (copy / "build/smoke/raw/toy/rows.jsonl").read_text().splitlines()]
    assert {(x["size"], x["how"]) for x in rows} == {(n, h) for n in (100, 2000) for h in ("loop", "formula")}
    assert {x["repeat"] for x in rows} == {0, 1} and all(x["experiment"] == "toy" for x in rows)
    table = (copy / "build/smoke/tables/toy.md").read_text()
    assert table.startswith("# The sum of squares") and "formula" in table
    # a config key the declaration does not know is refused in one line
    with open(copy / config.replace("<grid>", "smoke"), "a") as fh:
        fh.write("  speed: 3\n")
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "-n", "build/smoke/tables/toy.md"],
                       cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "config toy.speed: not a setting of experiment toy" in r.stdout + r.stderr


def test_verbs_read_from_their_own_lines_are_the_whole_modules(tmp_path, monkeypatch):
    """frame.declared parses the VERBS statement's own lines (every command start reads every declaration): the
    same verbs as parsing the whole module, for every experiment and report module; a declaration whose ")" line
    does not end it (a tuple sum) or whose slice is not Python (a ")" line inside a string) is read whole."""
    import ast

    from smtbench.experiments import frame

    def whole(path: Path):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "VERBS" for t in node.targets):
                return tuple(eval(compile(ast.Expression(node.value), str(path), "eval"),
                                  {"__builtins__": {}}, dict(frame._NAMES)))

    for group in ("bench", "report"):
        names = frame.declaring(group)
        assert names
        for name in names:
            assert repr(frame.declared(name, group)) == repr(whole(frame._path(name, group))), (group, name)
    odd = tmp_path / "odd.py"
    for text in ('X = 1\nVERBS = (Verb("a"),\n) + (Verb("b"),\n)\n', 'VERBS = (Verb("a", help="""x\n)\ny"""),\n)\n'):
        odd.write_text(text)
        monkeypatch.setattr(frame, "_path", lambda e, g="bench": odd)
        assert repr(frame.declared("odd")) == repr(whole(odd)) and len(whole(odd)) >= 1
