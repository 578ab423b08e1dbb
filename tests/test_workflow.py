"""Every profile's workflow parses, validates its config and plans its jobs (dry run)."""
from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest
from conftest import ORACLE

HAVE_SLURM_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None


@pytest.mark.parametrize("profile", [
    "smoke", "default", "paper",
    pytest.param("slurm", marks=pytest.mark.skipif(not HAVE_SLURM_PLUGIN,
                                                   reason="pip install -e '.[slurm]' for the SLURM executor plugin")),
    pytest.param("slurm-smoke", marks=pytest.mark.skipif(not HAVE_SLURM_PLUGIN,
                                                         reason="pip install -e '.[slurm]' for the SLURM executor plugin")),
])
def test_dry_run(root, profile):
    """Each profile plans with no flag beside it."""
    r = subprocess.run(["snakemake", "--profile", f"workflow/profiles/{profile}", "-n", "--quiet", "rules"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_no_profile_is_laid_over_a_run(root):
    """The Snakefile sits at the root, so Snakemake finds no workflow profile: `snakemake --cores 2` plans the default
    grid with nothing else applied, a named profile is the only one used, and no documented command needs
    `--workflow-profile`."""
    assert (root / "Snakefile").is_file() and not (root / "workflow" / "Snakefile").exists()
    assert not (root / "profiles").exists()  # where Snakemake would look for a workflow profile beside the Snakefile
    # --forceall: the plan lists every rule of the grid whatever this checkout already holds (after a reproduction
    # its benches are up to date and a plain dry run plans none of them)
    r = subprocess.run(["snakemake", "--cores", "2", "-n", "--forceall", "--quiet", "rules"], cwd=root,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "profile" not in r.stderr.lower() and "mokry_hash_bench" in r.stdout
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/paper", "-n", "--quiet", "rules"], cwd=root,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "workflow specific profile" not in r.stderr, r.stderr[-2000:]
    docs = [root / "README.md", root / "CONTRIBUTING.md", root / "Makefile", root / "Snakefile",
            *(p for p in (root / "tools").rglob("*") if p.is_file() and p.suffix != ".pyc"),
            *(root / "workflow" / "profiles").glob("*/config.yaml")]
    assert [str(d.relative_to(root)) for d in docs if "workflow-profile none" in d.read_text()] == []


def test_any_grid_on_any_executor(root):
    """The grid is a config file, the executor a profile: the smoke grid through the default (local) profile plans
    the same jobs as the smoke profile."""
    def jobs(*args):
        r = subprocess.run(["snakemake", *args, "-n", "-p", "--forceall", "--nolock"], cwd=root,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        return sorted(x for x in r.stdout.splitlines() if x.startswith(("rule ", "localrule ", "Shell command:")))
    assert jobs("--profile", "workflow/profiles/default", "--configfile", "config/smoke.yaml") == \
        jobs("--profile", "workflow/profiles/smoke")


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_lint_is_clean(root, profile):
    """`snakemake --lint` finds nothing: a log, a conda environment and named inputs in shell commands for every
    rule, no hard-coded paths in params (the Snakemake workflow catalog's conventions)."""
    r = subprocess.run(["snakemake", "--profile", f"workflow/profiles/{profile}", "--lint"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0 and "Lints for" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]


def test_bad_config_is_rejected(root):
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "-n", "--config", "grid=bogus"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "bogus" in (r.stdout + r.stderr)


def test_an_experiment_sets_its_own_protocol_keys(root, tmp_path):
    """An experiment's `protocol:` keys go over the grid's block for its rules only; a key the protocol lacks is
    refused by the schema."""
    import yaml
    grid = yaml.safe_load((root / "config" / "smoke.yaml").read_text())
    grid["mokry_hash"]["protocol"] = {"max_repeats": 17}
    cfg = tmp_path / "grid.yaml"
    cfg.write_text(yaml.safe_dump(grid))
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "--configfile", str(cfg), "-n", "-p",
                        "--forceall", "--nolock"], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    cmds = [x for x in r.stdout.splitlines() if "--max-repeats" in x]
    hash_cmds = [x for x in cmds if "bench mokry_hash" in x]
    assert hash_cmds and all("--max-repeats 17 " in x for x in hash_cmds)
    assert len(cmds) > len(hash_cmds) and not any("--max-repeats 17 " in x for x in cmds if x not in hash_cmds)
    grid["mokry_hash"]["protocol"] = {"max_repeat": 17}
    cfg.write_text(yaml.safe_dump(grid))
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "--configfile", str(cfg), "-n",
                        "--nolock"], cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "max_repeat" in r.stdout + r.stderr


def test_one_name_per_experiment(root):
    """Every experiment's config key is its rule file's stem and its schema definition's name; every grid is one
    config file named after its `grid`."""
    import yaml

    schema = yaml.safe_load((root / "workflow/schemas/config.schema.yaml").read_text())
    settings = {"grid", "outdir", "shared", "native", "oracle_absent", "protocol", "regression"}
    for key, spec in schema["properties"].items():
        if key in settings:
            continue
        assert (root / "workflow/rules" / f"{key}.smk").exists(), f"config key {key} has no rule file {key}.smk"
        assert spec.get("$ref") == f"#/$defs/{key}", (key, spec)
    for grid in schema["properties"]["grid"]["enum"]:
        assert yaml.safe_load((root / "config" / f"{grid}.yaml").read_text())["grid"] == grid


def test_fresh_clone_redoes_every_measurement(tmp_path):
    """Reproduction integrity: a fresh clone has no native-build stamp (build/ is never committed), so a dry run of
    the default profile schedules the build, the machine record and every measurement, although their committed
    outputs are newer than their inputs."""
    import shutil
    import subprocess
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    clone = tmp_path / "main"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    shared = root.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared.resolve())
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/default", "-n", "--quiet", "rules"], cwd=clone,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    want = {"build_native", "machine", "mokry_hash_bench", "mokry_lm_bench", "glm_btree_bench",
            "mediani_scoring_bench", "moses_decode_run", "tm_model_filtered"}
    if shared.exists():
        want |= {"moses_decode_oracle_run", "moses_training_fidelity", "moore_quirk_bench", "moore_quirk_moses_bench"}
    got = set(r.stdout.split())
    assert want <= got, f"not redone on a fresh clone: {sorted(want - got)}"


def _index_args(out: str, flag: str) -> set[str]:
    """The EXPERIMENT names given to `smtbench report index` after `flag` (--not-run / --models) in a dry run's -p."""
    import shlex
    line = next(x for x in out.splitlines() if "smtbench report index" in x)
    words = shlex.split(line.split("Shell command:", 1)[-1])
    got, on = set(), False
    for w in words:
        if w.startswith("--"):
            on = w == flag
        elif on:
            got.add(w)
    return got


DECODING_BENCHES = {  # the decoding experiments' timing rules -> the model their command must decode when trained
    "mokry_decoder_bench": "bench mokry_decoder -f work/tm/model-test/moses.ini --input work/data/test.es",
    "moses2_search_bench": "bench moses2_search -f work/tm/model-test/moses.ini --input work/data/test.es",
    "moses2_scaling_bench": "bench moses2_scaling -f work/tm/model-test/moses.ini --input work/data/test.es",
    "moore_quirk_bench": "bench moore_quirk -f work/moore-quirk/trained/model/moses.ini --input work/data/test.es",
}


def test_a_clone_without_shared_decodes_its_own_model_and_names_what_needs_the_oracle(tmp_path):
    """With the shared folder hidden (SMTBENCH_SHARED at an empty folder), the default profile still schedules the
    live decoding comparison and every decoding benchmark on the workflow's own trained model (its config says
    `model: oracle`, the committed rows' model, and `oracle_absent: trained`), the results index is told which model
    each ran on, and only what truly needs the oracle is named as not run (none is skipped silently)."""
    import os
    empty = tmp_path / "empty"
    empty.mkdir()
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "SMTBENCH_SHARED": str(empty)}
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/default", "-n", "-p", "--forcerun",
                        "results_index", "moses_decode_run", *DECODING_BENCHES], cwd=root, capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout + r.stderr
    assert "moses_decode_run" in out and "tm_model_filtered" in out and "--peers moses2 moses" in out
    assert "moses_decode_oracle_run" not in out
    for rule, command in DECODING_BENCHES.items():
        assert f"rule {rule}:" in out, rule
        assert command in out, (rule, command)
    assert "moore_quirk_moses_bench" not in out  # the oracle's Moses model and recorded runs: not here
    assert "--oracle" not in next(x for x in out.splitlines() if "bench moses2_scaling -f" in x)  # no Moses2 run of it
    assert str(empty) not in "".join(x for x in out.splitlines() if "smtbench bench " in x)
    # the index: what needs the oracle (and nothing else), and the model each decoding experiment ran on
    assert {x.split(":")[0] for x in _index_args(out, "--not-run")} == {"moses_training", "moore_quirk_moses", "counts"}
    assert all("needs the Moses oracle" in x for x in _index_args(out, "--not-run"))
    models = {x.split(":", 1)[0]: x.split(":", 1)[1] for x in _index_args(out, "--models")}
    assert models["moses_decode"].startswith("trained")
    for experiment in ("mokry_decoder", "moses2_search", "moses2_scaling", "moore_quirk"):
        assert models[experiment].startswith("trained") and "NOT the configured oracle" in models[experiment]


def test_a_clone_without_shared_never_switches_models_silently(tmp_path):
    """A profile without `oracle_absent: trained` (smoke: its baseline is the oracle model's) does not run its
    `model: oracle` decoding experiments on another model where the oracle is absent: it names them as not run."""
    import os
    empty = tmp_path / "empty"
    empty.mkdir()
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "SMTBENCH_SHARED": str(empty)}
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "-n", "-p", "--forcerun",
                        "results_index"], cwd=root, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout + r.stderr
    not_run = {x.split(":")[0] for x in _index_args(out, "--not-run")}
    for rule in [*DECODING_BENCHES, "moses_decode_run"]:
        assert f"rule {rule}:" not in out, rule
        assert rule.removesuffix("_bench").removesuffix("_run") in not_run, rule
    assert "mokry_decoder" not in {x.split(":")[0] for x in _index_args(out, "--models")}


def test_timing_rules_take_the_whole_machine(root):
    """Every rule holding the `bench` resource also asks for BENCH_THREADS, so that Snakemake runs nothing beside
    it (threads are capped at --cores), and the rule files have a log and the shared conda environment for every rule (snakemake --lint)."""
    import re

    for path in sorted((root / "workflow" / "rules").glob("*.smk")):
        text = path.read_text()
        for m in re.finditer(r"^([ \t]*)(?:rule|checkpoint) (\w+):\n((?:\1[ \t]+.*\n|[ \t]*\n)*)", text, re.M):
            body = m.group(3)
            if "bench=1" in body:
                assert "threads: BENCH_THREADS" in body, f"{path.name}: rule {m.group(2)} times without the machine"
            assert re.search(r"^\s+log:", body, re.M), f"{path.name}: rule {m.group(2)} has no log"
            assert re.search(r"^\s+conda: CONDA_ENV$", body, re.M), f"{path.name}: rule {m.group(2)} has no conda env"


def test_results_index_and_notes_name_the_model(tmp_path):
    """`report index --models` lists each decoding experiment's model; a table's notes name the model its rows
    recorded (rows from before the field: the oracle's)."""
    import pandas as pd

    from smtbench.report.common import model_note
    from smtbench.report.index import build

    text = build(tmp_path, "default", not_run=["moses_training:needs the Moses oracle (x), absent"],
                 models=["mokry_decoder:trained (the workflow's own model, test books), NOT the configured oracle"])
    assert "## Models of the decoding experiments" in text
    assert "- mokry_decoder: trained (the workflow's own model, test books), NOT the configured oracle" in text
    assert "- moses_training: needs the Moses oracle (x), absent" in text
    rows = pd.DataFrame([{"model": "work/tm/model-test/moses.ini", "input": "work/data/test.es", "bleu": 1.0}])
    assert model_note(rows) == ("Model: work/tm/model-test/moses.ini (the workflow's own trained model); "
                                "input: work/data/test.es.")
    assert "moses-bible-dev/moses.ini, the Moses oracle's model (these rows predate" in model_note(rows[["bleu"]])


def test_decoding_experiments_rerun_on_tuned_weights(root, tmp_path):
    """The default grid's `weights:` runs: the trained model reweighted with tune's MIRA weights (tm reweight) for
    moses_decode (beside Moses2 on the same ini), mokry_decoder and moses2_search, their untuned trained-model runs,
    and Moore & Quirk's own model tuned and re-run; tuned weights of other tables are refused."""
    import yaml
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/default", "-n", "-p", "--forceall", "--nolock"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    cmds = [x for x in r.stdout.splitlines() if x.startswith("Shell command:")]
    assert any("tm reweight -f work/tm/model-test/moses.ini --weights work/tune/trained/mira/tuned.ini" in x
               for x in cmds)
    assert any("bench moses_decode -f work/tm/model-test-mira/moses.ini" in x and "--peers moses2" in x
               for x in cmds)
    # without the oracle (oracle_absent: trained) the experiments' main run is the untuned trained model itself,
    # so its `default` weights run is that run (rows.jsonl / trained.jsonl), not a second one
    untuned = (("mokry_decoder/trained-default.jsonl", "moses2_search/rows-trained-default.jsonl") if ORACLE.is_dir()
               else ("mokry_decoder/trained.jsonl", "moses2_search/rows.jsonl"))
    for rows in ("mokry_decoder/trained-mira.jsonl", "moses2_search/rows-trained-mira.jsonl",
                 "moore_quirk/rows-mira.jsonl", *untuned):
        assert any(f"--out results/raw/{rows}" in x for x in cmds), rows
    mq = "work/moore-quirk/tune/model" if ORACLE.is_dir() else "work/moore-quirk/trained/tune/model"
    assert any(f"smtbench tune -f {mq}/moses.ini" in x for x in cmds)
    grid = yaml.safe_load((root / "config" / "default.yaml").read_text())
    grid["tune"]["model"] = "oracle"
    cfg = tmp_path / "grid.yaml"
    cfg.write_text(yaml.safe_dump(grid))
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/default", "--configfile", str(cfg), "-n",
                        "--nolock"], cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "tune.model: trained" in r.stdout + r.stderr
