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
