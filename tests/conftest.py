"""Shared fixtures. Tests assert correctness only; timings live in the workflow's benchmarks."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the real-Moses oracle (../shared/oracles/moses-bible-dev beside the checkout); decoder tests skip without it
ORACLE = ROOT.parent / "shared" / "oracles" / "moses-bible-dev"
HAVE_ORACLE = (ORACLE / "moses.ini").exists()

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


@pytest.fixture(scope="session")
def oracle_model():
    """The oracle's Moses model (moses.ini with relative paths: loaded from inside its folder, as Moses runs),
    loaded once for every decoder test (the tests never change it)."""
    if not HAVE_ORACLE:
        pytest.skip("Moses oracle not present")
    from smtbench.decode.model import PhraseModel

    cwd = os.getcwd()
    os.chdir(ORACLE)
    try:
        return PhraseModel("moses.ini")
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="session")
def oracle_dev() -> list[str]:
    """The oracle's dev source verses."""
    if not HAVE_ORACLE:
        pytest.skip("Moses oracle not present")
    return (ORACLE / "dev.es").read_text(encoding="utf-8").splitlines()
