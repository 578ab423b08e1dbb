"""Moses phrase extraction and lexical tables on hand-made cases."""
from __future__ import annotations

import gzip

import pytest

from smtbench.tm.align import AlignmentFormatError
from smtbench.tm.extract import extract_files, extract_sentence, lexical_counts


def spans(fw, ew, pts, max_len=7):
    f, e = fw.split(), ew.split()
    return sorted((" ".join(f[a:b + 1]), " ".join(e[c:d + 1]), tuple(r))
                  for a, b, c, d, r in extract_sentence(len(f), len(e), pts, max_len))


def test_monotone_two_words():
    assert spans("a b", "x y", [(0, 0), (1, 1)]) == [
        ("a", "x", ((0, 0),)), ("a b", "x y", ((0, 0), (1, 1))), ("b", "y", ((0, 0),))]


def test_unaligned_source_word_extends_both_neighbours():
    got = [(f, e) for f, e, _ in spans("a b c", "x y", [(0, 0), (2, 1)])]
    assert got == [("a", "x"), ("a b", "x"), ("a b c", "x y"), ("b c", "y"), ("c", "y")]


def test_unaligned_target_word_is_covered_by_spans():
    got = [(f, e) for f, e, _ in spans("a b", "x y z", [(0, 0), (1, 2)])]
    assert got == [("a", "x"), ("a", "x y"), ("a b", "x y z"), ("b", "y z"), ("b", "z")]


def test_max_length():
    got = [(f, e) for f, e, _ in spans("a b c", "x y z", [(0, 0), (1, 1), (2, 2)], max_len=2)]
    assert got == [("a", "x"), ("a b", "x y"), ("b", "y"), ("b c", "y z"), ("c", "z")]
    # the F side extension over unaligned words also respects the limit
    got = [(f, e) for f, e, _ in spans("a u v b", "x y", [(0, 0), (3, 1)], max_len=2)]
    assert ("a u", "x") in got and ("a u v", "x") not in got and ("v b", "y") in got


def test_inconsistent_spans_are_skipped():
    got = [(f, e) for f, e, _ in spans("a b", "x y", [(0, 0), (0, 1), (1, 1)])]
    assert got == [("a b", "x y")]


def test_no_pairs_without_links():
    assert spans("a", "x", []) == []


def test_relative_points_in_target_order():
    got = spans("a b", "x y", [(1, 0), (0, 1)])
    assert ("a b", "x y", ((1, 0), (0, 1))) in got


def test_extract_files_and_lex(tmp_path):
    (tmp_path / "f").write_text("a b\nc a\n")
    (tmp_path / "e").write_text("x y\nz x\n")
    (tmp_path / "al").write_text("0-0 1-1\n1-1\n")
    n = extract_files(*(str(tmp_path / x) for x in ("f", "e", "al", "extract.gz", "extract.inv.gz")))
    lines = gzip.open(tmp_path / "extract.gz", "rt").read().splitlines()
    inv = gzip.open(tmp_path / "extract.inv.gz", "rt").read().splitlines()
    assert n == 7 == len(lines) == len(inv)  # 3 + (a|x, c a|x, a|z x, c a|z x)
    assert "a b ||| x y ||| 0-0 1-1" in lines and "x y ||| a b ||| 0-0 1-1" in inv
    cfe, cf, ce = lexical_counts(*(str(tmp_path / x) for x in ("f", "e", "al")))
    assert cfe["a", "x"] == 2 and cfe["c", "NULL"] == 1 and cfe["NULL", "z"] == 1
    assert cf["a"] == 2 and ce["NULL"] == 1 and cf["NULL"] == 1


def test_bad_alignment_names_file_and_line(tmp_path):
    (tmp_path / "f").write_text("a b\nc\n")
    (tmp_path / "e").write_text("x y\nz\n")
    (tmp_path / "al").write_text("0-0\n0-3\n")
    with pytest.raises(AlignmentFormatError, match=r"al:2: "):
        extract_files(*(str(tmp_path / x) for x in ("f", "e", "al", "x.gz", "xi.gz")))
    assert not (tmp_path / "x.gz").exists()
