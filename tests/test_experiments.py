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
    assert bench[name].get_default("func").__name__ == f"run_{name}"  # built from its declaration (frame.py)


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
    mods = {p.stem for p in Path(experiments.__file__).parent.glob("*.py")} - {"__init__", "harness", "frame"}
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


# ----------------------------------------------------------------------------------------------- one declaration

def _schema_prop(schema: dict, prop: dict) -> dict:
    """A property with its `$ref` (a local #/$defs/... pointer) resolved under its own keys."""
    while "$ref" in prop:
        node = schema
        for part in prop["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        prop = {**node, **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


def test_no_hand_written_bench_options():
    """Issue 39: no `commands/bench_<experiment>.py`; every experiment module declares VERBS."""
    from smtbench import experiments
    assert not list((ROOT / "pylib" / "smtbench" / "commands").glob("bench_*.py"))
    for name in experiments.SWEEPS:
        assert "VERBS = (" in (ROOT / "pylib" / "smtbench" / "experiments" / f"{name}.py").read_text(), name


@pytest.mark.parametrize("name", sorted(k for k, v in OLD_BENCH.items() if v))
def test_schema_and_bench_options_from_one_declaration(name):
    """Each setting of an experiment is declared once (VERBS in experiments/<name>.py): its `bench` options are
    built from it (same defaults, types, choices), and the config schema's block for the experiment names only
    declared keys, with the declared defaults, types and choices (a grid list = the option's comma-separated
    items)."""
    import argparse

    import yaml

    from smtbench.experiments import frame

    bench = _choices("bench")
    for verb in frame.declared(name):
        actions = {a.dest: a for a in bench[verb.name]._actions}
        for s in verb.settings:
            if s.kind == "arg":
                a = actions[s.dest]
                assert list(a.option_strings) == list(s.flags), (verb.name, s.dest)
                assert a.default == s.default and a.required == bool(s.kw.get("required")), (verb.name, s.dest)
                assert (a.type or str) is s.type or isinstance(a, (argparse._StoreTrueAction,
                                                                  argparse._StoreFalseAction)), (verb.name, s.dest)
            elif s.kind == "protocol":
                assert actions["repeats"].default == s.default
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    props = schema["$defs"][name]["properties"]
    declared = {s.config: s for s in frame.settings(name) if s.config}
    allowed = set(declared) | ({"protocol"} if "repeats" in declared else set())
    assert set(props) <= allowed, f"{name}: schema keys not declared in VERBS: {sorted(set(props) - allowed)}"
    assert set(declared) <= set(props), f"{name}: declared keys not in the schema: {sorted(set(declared) - set(props))}"
    kinds = {"integer": int, "number": float, "boolean": bool, "object": dict}
    for k, s in declared.items():
        p = _schema_prop(schema, props[k])
        cli_list = s.grid and s.kind == "arg"
        if s.grid:
            assert p.get("type") == "array", f"{name}.{k}: a grid setting is a list in the config"
        elif p.get("type") in kinds and s.kind != "protocol":
            assert s.type in (kinds[p["type"]], int if p["type"] == "number" else None), f"{name}.{k}: {s.type}"
        enum = p.get("enum") or (p.get("items") or {}).get("enum")
        if enum and s.kw.get("choices"):
            assert set(enum) <= set(s.kw["choices"]), f"{name}.{k}: {enum} vs {s.kw['choices']}"
        if enum and cli_list and s.default:
            assert set(s.default.split(",")) <= {str(e) for e in enum}, f"{name}.{k}: default {s.default}"
        if "default" in p and s.default is not None and not s.kw.get("required"):
            want = ",".join(map(str, p["default"])) if cli_list else p["default"]
            assert s.default == want, f"{name}.{k}: declared default {s.default!r}, schema's {p['default']!r}"


def test_every_correctness_check_goes_through_must_agree():
    """Issue 39: an experiment's correctness checks raise ResultMismatch through harness.must_agree (agree and
    agree_close call it); a bare `raise RuntimeError` is left only for a program that failed (its exit status)."""
    import ast

    folder = ROOT / "pylib" / "smtbench" / "experiments"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                continue
            name = getattr(node.exc.func, "id", "")
            where = f"{path.name}:{node.lineno}"
            assert name != "ResultMismatch" or (path.name, ) == ("harness.py", ), where
            if name == "RuntimeError":
                text = ast.unparse(node.exc).lower()
                assert "exit" in text or "fail" in text, f"{where}: a correctness check raising RuntimeError"


def test_must_agree_is_the_one_stop():
    from smtbench.errors import ResultMismatch
    from smtbench.experiments.harness import must_agree
    must_agree(True, "fine")
    with pytest.raises(ResultMismatch, match="^x differs$"):
        must_agree(0, "x differs")


def test_one_repeat_loop_drives_every_experiment():
    """Issue 39: every experiment runs its points through frame.Sweep (the protocol's RepeatLoop), never its own
    loop nor RepeatLoop/run_points directly."""
    from smtbench import experiments
    for name in experiments.SWEEPS:
        text = (ROOT / "pylib" / "smtbench" / "experiments" / f"{name}.py").read_text()
        assert "Sweep(" in text, name
        for direct in ("RepeatLoop(", "run_points("):
            assert direct not in text, f"{name} calls {direct} itself"


def test_sweep_runs_points_and_peers_through_the_protocol():
    from smtbench.experiments.frame import Sweep
    from smtbench.protocol import NullWriter, Protocol, Ratio
    seen = []
    s = Sweep("toy", Protocol(repeats=2, probe_mib=0), NullWriter(), ratios=[Ratio.speedup("r", "a", "b")])
    s.points(["a"], lambda rep, pt: seen.append((rep, pt)) or 1.0).peer("b", lambda rep: seen.append((rep, "b")) or 2.0)
    summary = s.run()
    assert s.peers == ["b"] and s.keys == {"a", "b"}
    assert summary.repeats == 2 and seen == [(0, "a"), (0, "b"), (1, "b"), (1, "a")]
    assert summary.cis["r"].estimate == pytest.approx(2.0)


def test_no_rule_falls_back_on_its_own_default():
    """Issue 39: a rule reads its experiment's settings as config[key]: the schema (or, for an experiment it does not
    list, the declaration) gives every default, so no rule file has a `.get("key", fallback)` of its own."""
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        found = re.findall(r'\.get\("\w+",[^)]*\)', smk.read_text())
        assert not found, f"{smk.name}: {found}"


def test_config_block_of_an_unlisted_experiment_comes_from_its_declaration(tmp_path):
    """frame.config_blocks: an experiment the schema does not list (here mokry_decoder, taken out of a copy of the
    schema) gets its block checked against its declaration and its declared defaults, as the schema would."""
    import yaml

    from smtbench.experiments import frame
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    del schema["properties"]["mokry_decoder"]
    path = tmp_path / "schema.yaml"
    path.write_text(yaml.safe_dump(schema))
    assert frame.unlisted(str(path)) == ["mokry_decoder"]
    config = {"grid": "smoke", "mokry_decoder": {"pop_limit": 5, "protocol": {"max_repeats": 3}}}
    block = frame.config_blocks(config, str(path))["mokry_decoder"]
    assert "mokry_decoder" not in config  # the rest goes to the schema
    assert block == {"pop_limit": 5, "protocol": {"max_repeats": 3}, "queue_sizes": "1-16", "exact_queue_sizes": "",
                     "sentences": 0, "repeats": 3, "model": "trained", "lms": [], "weights": []}
    for bad, why in (({"pop_limit": "x"}, "is not of type int"), ({"speed": 1}, "not a setting of experiment"),
                     ({"protocol": {"fast": 1}}, "fast: not a key of the repeat protocol"),
                     ({"lms": "a"}, "is not of type list")):
        with pytest.raises(ValueError, match=why):
            frame.config_blocks({"mokry_decoder": bad}, str(path))


@pytest.mark.parametrize("name", sorted(k for k, v in OLD_BENCH.items() if v))
def test_report_verb_declared_in_its_report_module(name):
    """Each experiment's `report` verb is built from VERBS in report/<name>.py (no commands/report_<name>.py)."""
    from smtbench.experiments import frame
    assert not (ROOT / "pylib" / "smtbench" / "commands" / f"report_{name}.py").exists()
    assert name in frame.declaring("report")
    report = _choices("report")
    assert report[name].get_default("func").__name__ == f"run_{name}"
    actions = {a.dest: a for a in report[name]._actions}
    for verb in frame.declared(name, "report"):
        for s in verb.settings:
            assert actions[s.dest].default == s.default and list(actions[s.dest].option_strings) == list(s.flags)
