"""Every profile's workflow parses, validates its config and plans its jobs (dry run)."""
from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

HAVE_SLURM_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None


@pytest.mark.parametrize("profile", [
    "smoke", "default", "paper",
    pytest.param("slurm", marks=pytest.mark.skipif(not HAVE_SLURM_PLUGIN,
                                                   reason="pip install -e '.[slurm]' for the SLURM executor plugin")),
    pytest.param("slurm-smoke", marks=pytest.mark.skipif(not HAVE_SLURM_PLUGIN,
                                                         reason="pip install -e '.[slurm]' for the SLURM executor plugin")),
])
def test_dry_run(root, profile):
    r = subprocess.run(["snakemake", "--profile", f"workflow/profiles/{profile}", "-n", "--quiet", "rules"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_lint_is_clean(root, profile):
    """`snakemake --lint` finds nothing: a log, a conda environment and named inputs in shell commands for every
    rule, no hard-coded paths in params (the Snakemake workflow catalog's conventions)."""
    r = subprocess.run(["snakemake", "--profile", f"workflow/profiles/{profile}", "--lint"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0 and "Lints for" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]


def test_bad_config_is_rejected(root):
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "-n", "--config", "profile=bogus"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "bogus" in (r.stdout + r.stderr)


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
    want = {"build_native", "machine", "hash_sweep", "mokry_lm_bench", "glm_btree_bench", "mediani_bench",
            "moses_decode_run", "tm_model_filtered"}
    if shared.exists():
        want |= {"moses_decode_oracle_run", "moses_training_fidelity", "moore_quirk_bench", "moore_quirk_moses_bench"}
    got = set(r.stdout.split())
    assert want <= got, f"not redone on a fresh clone: {sorted(want - got)}"


def test_a_clone_without_shared_decodes_its_own_model_and_names_what_needs_the_oracle(tmp_path):
    """With the shared folder hidden (SMTBENCH_SHARED at an empty folder), the default profile still schedules the
    live decoding comparison on the workflow's own trained model, and the results index is told which experiments
    need the oracle (none is skipped silently)."""
    import os
    empty = tmp_path / "empty"
    empty.mkdir()
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "SMTBENCH_SHARED": str(empty)}
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/default", "-n", "-p", "--forcerun",
                        "results_index", "moses_decode_run"], cwd=root, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout + r.stderr
    assert "moses_decode_run" in out and "tm_model_filtered" in out and "--peers moses2 moses" in out
    assert "moses_decode_oracle_run" not in out
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/default", "-n", "-p", "--forcerun",
                        "results_index"], cwd=root, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    for experiment in ("mokry_decoder", "moses2_search", "moses2_scaling", "moore_quirk", "moses_training"):
        assert f"{experiment}:needs the Moses oracle" in r.stdout + r.stderr, experiment


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
