"""Every profile's workflow parses, validates its config and plans its jobs (dry run)."""
from __future__ import annotations

import importlib.util
import subprocess

import pytest

HAVE_SLURM_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None


@pytest.mark.parametrize("profile", [
    "smoke", "default", "paper",
    pytest.param("slurm", marks=pytest.mark.skipif(not HAVE_SLURM_PLUGIN,
                                                   reason="pip install -e '.[slurm]' for the SLURM executor plugin")),
])
def test_dry_run(root, profile):
    r = subprocess.run(["snakemake", "--profile", f"workflow/profiles/{profile}", "-n", "--quiet", "rules"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_bad_config_is_rejected(root):
    r = subprocess.run(["snakemake", "--profile", "workflow/profiles/smoke", "-n", "--config", "profile=bogus"],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode != 0 and "bogus" in (r.stdout + r.stderr)
