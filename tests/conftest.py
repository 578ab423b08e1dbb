"""Shared fixtures. Tests assert correctness only; timings live in the workflow's benchmarks."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# matplotlib must never try to open a window
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture
def toy_arpa(tmp_path) -> Path:
    """tests/toy_models.TOY_ARPA written to a file."""
    from toy_models import TOY_ARPA

    p = tmp_path / "toy.arpa"
    p.write_text(TOY_ARPA)
    return p
