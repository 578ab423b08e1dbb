"""Orientation extraction (Moses' `extract ... orientation --model wbe-msd`) and reordering scoring
(`lexical-reordering-score ... 0.5`), on hand-checked cases; the full check against Moses' own tables is the
`tm fidelity` step of the workflow (oracle alignment -> our tables == Moses')."""
from __future__ import annotations

import gzip

import pytest

from smtbench.tm.extract import extract_files, orientations
from smtbench.tm.reordering import OrientationFormatError, score_reordering


def test_orientations_monotone_and_swap() -> None:
    mono = {(0, 0), (1, 1)}
    assert orientations(2, 2, mono, 0, 0, 0, 0) == ("mono", "mono")
    assert orientations(2, 2, mono, 1, 1, 1, 1) == ("mono", "mono")  # (|F|, |E|) counts as linked
    swap = {(0, 1), (1, 0)}
    assert orientations(2, 2, swap, 0, 0, 1, 1) == ("swap", "other")
    assert orientations(2, 2, swap, 1, 1, 0, 0) == ("other", "swap")


def test_extract_writes_orientations(tmp_path) -> None:
    (tmp_path / "f").write_text("a b\n")
    (tmp_path / "e").write_text("y x\n")
    (tmp_path / "al").write_text("0-1 1-0\n")
    n = extract_files(str(tmp_path / "f"), str(tmp_path / "e"), str(tmp_path / "al"), str(tmp_path / "x.gz"),
                      str(tmp_path / "xi.gz"), orientation_out=str(tmp_path / "o.gz"))
    lines = gzip.open(tmp_path / "o.gz", "rt").read().splitlines()
    assert len(lines) == n == 3
    assert "a ||| x ||| swap other" in lines and "b ||| y ||| other swap" in lines and "a b ||| y x ||| mono mono" in lines


def test_scoring_smoothing(tmp_path) -> None:
    o = tmp_path / "o"
    o.write_text("f ||| e ||| mono mono\ng ||| h ||| mono swap\ng ||| h ||| other swap\n")
    score_reordering([str(o)], str(tmp_path / "r"))
    got = (tmp_path / "r").read_text().splitlines()
    assert got[0] == "f ||| e ||| 0.6 0.2 0.2 0.6 0.2 0.2"
    assert got[1] == "g ||| h ||| 0.428571 0.142857 0.428571 0.142857 0.714286 0.142857"
    o.write_text("f ||| e ||| mono\n")
    with pytest.raises(OrientationFormatError, match=r"o:1: orientations"):
        score_reordering([str(o)], str(tmp_path / "r2"))
