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


def test_build_records_flags():
    info = buildinfo()
    assert "-O3" in info["cflags_compiled"] and "-std=c11" in info["cflags_compiled"]
    assert info["native"] == ("-march=native" in info["cflags_compiled"])
