"""Build and packaging facts: conda and pip agree, the build records its flags, the CUDA-free path works."""
from __future__ import annotations

import re
import tomllib

import yaml

from smtbench.native import buildinfo


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def test_environment_yml_agrees_with_pyproject(root):
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    pip_deps = {_name(d) for d in project["dependencies"]}
    pip_deps |= {_name(d) for d in project["optional-dependencies"]["test"]}
    env = yaml.safe_load((root / "environment.yml").read_text())
    conda: set[str] = set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            conda |= {_name(d) for d in dep.get("pip", [])}
        else:
            conda.add(_name(dep.split("=")[0]))
    conda.discard("python")
    conda.discard("pip")
    assert pip_deps == conda, f"only in pyproject: {pip_deps - conda}; only in environment.yml: {conda - pip_deps}"


def test_workflow_env_agrees_with_pyproject(root):
    """The rules' conda environment (workflow/envs/smtbench.yaml) holds the runtime dependencies and this checkout."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    pip_deps = {_name(d) for d in project["dependencies"]}
    env = yaml.safe_load((root / "workflow" / "envs" / "smtbench.yaml").read_text())
    conda: set[str] = set()
    editable = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            editable += [d for d in dep.get("pip", []) if d.startswith("-e ")]
            conda |= {_name(d) for d in dep.get("pip", []) if not d.startswith("-e ")}
        else:
            conda.add(_name(dep.split("=")[0]))
    conda -= {"python", "pip", "c-compiler"}
    assert pip_deps == conda, f"only in pyproject: {pip_deps - conda}; only in the workflow env: {conda - pip_deps}"
    assert editable == ["-e ../.."]  # the checkout, seen from Snakemake's copy in .snakemake/conda/


def test_build_records_flags():
    info = buildinfo()
    assert "-O3" in info["cflags_compiled"] and "-std=c11" in info["cflags_compiled"]
    assert info["native"] == ("-march=native" in info["cflags_compiled"])
