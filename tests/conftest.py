"""Shared fixtures. Tests assert correctness only; timings live in the workflow's benchmarks."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the real-Moses oracle (../shared/oracles/moses-bible-dev beside the checkout, or under $SMTBENCH_SHARED as the
# workflow reads it); the tests that need its recorded outputs skip without it, the others run on small_model
SHARED = Path(os.environ.get("SMTBENCH_SHARED") or ROOT.parent / "shared")
ORACLE = SHARED / "oracles" / "moses-bible-dev"
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


@pytest.fixture(scope="session")
def small_trained(tmp_path_factory):
    """(moses.ini, dev source lines, dev reference path) of the small model the tests train themselves with our
    pipeline (tests/small_model.py: no ../shared needed)."""
    from small_model import build

    d = tmp_path_factory.mktemp("small-model")
    ini = build(d)
    return ini, (d / "dev.es").read_text(encoding="utf-8").splitlines(), d / "dev.en"


@pytest.fixture(scope="session")
def small_model(small_trained):
    """The small trained model, loaded once (its moses.ini's relative paths resolved from its folder, as Moses)."""
    from smtbench.decode.model import PhraseModel

    ini = small_trained[0]
    cwd = os.getcwd()
    os.chdir(ini.parent)
    try:
        return PhraseModel("moses.ini")
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="session", params=["small", "oracle"])
def any_model(request):
    """(model, source lines) for decoder tests that need a model but no recorded Moses outputs: the small model
    trained by the tests (every clone), and the oracle's model where ../shared is present."""
    if request.param == "small":
        return request.getfixturevalue("small_model"), request.getfixturevalue("small_trained")[1]
    return request.getfixturevalue("oracle_model"), request.getfixturevalue("oracle_dev")
