"""One name per experiment (issue 25): the `bench` and `report` verbs, the experiments module, the report module,
the rule file, the notebook and CONTRIBUTING's map agree; the old verbs still parse as aliases."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from smtbench.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
#: experiment -> its `bench` verbs before issue 25 (None: no sweep of its own)
OLD_BENCH = {"mokry_hash": ["hash"], "mokry_lm": ["lm"], "glm_btree": ["btree"], "mediani_scoring": ["tmscore"],
             "mokry_decoder": ["pipeline"], "moses2_search": ["cube-configs"], "moses2_scaling": ["scaling"],
             "moses2_moses1": ["moses1"], "moore_quirk": ["beam"], "moses_decode": ["decode"],
             "moses_training": None, "tune": None}
OLD_REPORT = {"glm_btree": "glm", "mediani_scoring": "mediani"}


def _choices(*path: str) -> dict:
    import argparse
    p = build_parser()
    for word in path:
        p = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    return next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices


@pytest.mark.parametrize("name", sorted(OLD_BENCH))
def test_one_name_throughout(name):
    bench, report = _choices("bench"), _choices("report")
    assert (ROOT / "workflow" / "rules" / f"{name}.smk").is_file()
    assert name in report, f"report {name}"
    assert report[name.replace("_", "-")] is report[name]
    if name in OLD_REPORT:
        assert report[OLD_REPORT[name]] is report[name]
    importlib.import_module(f"smtbench.report.{name}")
    if OLD_BENCH[name] is None:
        assert name not in bench
        return
    assert name in bench, f"bench {name}"
    for alias in [name.replace("_", "-"), *OLD_BENCH[name]]:
        assert bench[alias] is bench[name], f"bench {alias} is not an alias of bench {name}"
    mod = importlib.import_module(f"smtbench.experiments.{name}")
    assert callable(mod.main)
    assert bench[name].get_default("func").__module__ == f"smtbench.commands.bench_{name}"


def test_rules_are_named_by_their_experiment():
    """Every sweep's timing rule is `<name>_bench` in its own rule file (moses_decode's is `moses_decode_run`, beside
    its oracle and weights runs), so `make retake POINT=<name>_bench` re-takes an experiment; Moore & Quirk's tuning
    rules live in moore_quirk.smk."""
    from smtbench import experiments
    rules = ROOT / "workflow" / "rules"
    for name in experiments.SWEEPS:
        rule = f"{name}_run" if name == "moses_decode" else f"{name}_bench"
        assert re.search(rf"^\s*rule {rule}:", (rules / f"{name}.smk").read_text(), re.M), f"{name}.smk: rule {rule}"
    text = "".join(p.read_text() for p in rules.glob("*.smk"))
    assert not re.search(r"rule (hash_sweep|mediani_bench):", text)
    assert re.search(r"rule moore_quirk_tune:", (rules / "moore_quirk.smk").read_text())


def test_second_verb_and_no_stray_sweeps():
    bench = _choices("bench")
    assert bench["tmscore-bleu"] is bench["mediani_scoring_bleu"]
    from smtbench import experiments
    mods = {p.stem for p in Path(experiments.__file__).parent.glob("*.py")} - {"__init__", "harness"}
    assert mods == set(experiments.SWEEPS) == {k for k, v in OLD_BENCH.items() if v}
    # the sweep drivers left their domain folders
    for old in ("hash/bench.py", "lm/lmbench.py", "lm/glm_bench.py", "tm/bench.py", "decode/moses1.py",
                "decode/moore_quirk.py", "decode/configs.py"):
        assert not (ROOT / "pylib" / "smtbench" / old).exists(), old


def test_contributing_map_shows_one_name_per_experiment():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Where each paper lives"):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
    rows = [line for line in section.splitlines() if re.match(r"\| `[a-z0-9_]+`", line)]
    named = [re.match(r"\| `([a-z0-9_]+)`", r).group(1) for r in rows]
    assert sorted(named) == sorted(OLD_BENCH)
    for name, row in zip(named, rows):
        if OLD_BENCH[name]:
            assert f"`bench {name}`" in row, row


def test_harness_agreement_fails_loudly():
    from smtbench.errors import CliError
    from smtbench.experiments.harness import agree, agree_close
    assert agree("sums", {"a": 1, "b": 1}) == 1
    with pytest.raises(CliError, match="sums differ across points .*'b': 2"):  # one line from the CLI
        agree("sums", {"a": 1, "b": 2})
    agree_close("kenlm", 1.0, {"x": 1.00001}, rel_tol=1e-4)
    with pytest.raises(CliError, match="kenlm: x: 1.1 differs from ours 1.0"):
        agree_close("kenlm", 1.0, {"x": 1.1}, rel_tol=1e-4)


def test_loading_subtracted_order_and_difference():
    from smtbench.experiments.harness import loading_subtracted
    seen = []
    whole, first, secs = loading_subtracted(lambda p: seen.append(p) or {"all": 5.0, "one": 2.0}[p], "all", "one")
    assert seen == ["all", "one"] and (whole, first, secs) == (5.0, 2.0, 3.0)
