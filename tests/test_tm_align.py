"""grow-diag-final-and on hand-made cases (Koehn's description; Moses symal semantics)."""
from __future__ import annotations

import pytest

from smtbench.tm.align import AlignmentFormatError, grow_diag_final_and, parse_links, symmetrize_files


def test_intersection_only_when_directions_agree():
    pts = [(0, 0), (1, 1)]
    assert grow_diag_final_and(pts, pts, 2, 2) == [(0, 0), (1, 1)]


def test_grow_adds_union_neighbours_with_an_uncovered_word():
    # direct: f0->e0, f1->e0; inverse: e0->f0, e1->f1; intersection {(0,0)}
    direct = [(0, 0), (1, 0)]
    inverse = [(0, 0), (1, 1)]
    # (f1,e0) is a horizontal neighbour with f1 uncovered; then (f1,e1) a vertical neighbour of it
    assert grow_diag_final_and(direct, inverse, 2, 2) == [(0, 0), (1, 0), (1, 1)]


def test_diagonal_neighbour_is_grown():
    assert grow_diag_final_and([(0, 0), (1, 1)], [(0, 0)], 2, 2) == [(0, 0), (1, 1)]


def test_non_neighbour_point_added_by_final_and_when_both_words_uncovered():
    assert grow_diag_final_and([(0, 0), (2, 2)], [(0, 0)], 3, 3) == [(0, 0), (2, 2)]


def test_final_and_needs_both_words_uncovered_but_final_needs_one():
    direct, inverse = [(0, 0), (2, 0)], [(0, 0)]   # (f2,e0): e0 already covered
    assert grow_diag_final_and(direct, inverse, 3, 1) == [(0, 0)]
    assert grow_diag_final_and(direct, inverse, 3, 1, final_and=False) == [(0, 0), (2, 0)]


def test_grow_does_not_add_points_whose_words_are_both_covered():
    # intersection covers f0,f1,e0,e1; (f1,e0) is in the union but both words are covered
    direct = [(0, 0), (1, 1)]
    inverse = [(0, 0), (1, 1), (1, 0)]
    assert grow_diag_final_and(direct, inverse, 2, 2) == [(0, 0), (1, 1)]


def test_empty_alignment():
    assert grow_diag_final_and([], [], 3, 2) == []


def test_point_outside_sentence_is_rejected():
    with pytest.raises(ValueError):
        grow_diag_final_and([(5, 0)], [], 2, 2)


def test_parse_links_errors_name_file_and_line():
    assert parse_links("0-1 2-3", "a", 1) == [(0, 1), (2, 3)]
    with pytest.raises(AlignmentFormatError, match=r"^f\.al:7: "):
        parse_links("0-1 x", "f.al", 7)


def test_symmetrize_files(tmp_path):
    (tmp_path / "s").write_text("a b\nc\n")
    (tmp_path / "t").write_text("x y\nz\n")
    (tmp_path / "fwd").write_text("0-0 1-1\n0-0\n")
    (tmp_path / "rev").write_text("0-0 1-1\n\n")
    n = symmetrize_files(*(str(tmp_path / x) for x in ("s", "t", "fwd", "rev", "out")))
    assert n == 2
    assert (tmp_path / "out").read_text() == "0-0 1-1\n0-0\n"
