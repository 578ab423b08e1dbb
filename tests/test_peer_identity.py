"""Issue 40: peer identity required. A live Moses2 line that scores above ours stops the run (ResultMismatch, one
line); a differing line that ties at Moses2's printed precision, and one ours scores higher, are counted; Moses v1's
better lines are counted (search differences), not fatal. The peer's output is parsed by decode.moses_run.run from a
stand-in program printing Moses' ``SCORE HYP`` lines (its printed precision read from them)."""
from __future__ import annotations

import sys

import pytest

from smtbench.decode import moses_run
from smtbench.decode.compare import peer_identity, printed_digits
from smtbench.errors import CliError, ResultMismatch

OURS = ["a b", "c d", "e f", "g h"]
OURS_SCORES = [-1.0, -2.0, -3.0, -4.0]


def _peer_output(tmp_path, lines: list[str]):
    """moses_run.run on a stand-in peer that prints ``lines`` (Moses2's -output-hypo-score format)."""
    prog = tmp_path / "peer.py"
    prog.write_text("import sys\nsys.stdin.read()\nprint(" + repr("\n".join(lines)) + ")\n")
    inp = tmp_path / "in"
    inp.write_text("x\n" * len(lines))
    return moses_run.run(moses_run.Decoder("moses2", [sys.executable, str(prog)], str(tmp_path)), inp)


def test_tie_and_ours_higher_are_counted(tmp_path):
    r = _peer_output(tmp_path, ["-1.000 a b", "-2.0001 c x", "-3.500 e y", "-4.000 g h"])
    assert r.digits == 4 and r.lines[1] == "c x"
    c = peer_identity("moses2", OURS, OURS_SCORES, r.lines, r.scores, digits=r.digits)
    assert (c.identical, c.ties, c.ours_higher, len(c.theirs_higher)) == (2, 1, 1, 0)
    d = c.as_dict("ours_vs")
    assert d["ours_vs_ties"] == 1 and d["ours_vs_ours_higher"] == 1 and d["ours_vs_score_ge"] == 4


def test_moses2_line_scoring_above_ours_stops_the_run(tmp_path):
    r = _peer_output(tmp_path, ["-1.000 a b", "-1.500 c z", "-3.000 e f", "-4.000 g h"])
    with pytest.raises(ResultMismatch) as e:
        peer_identity("moses2", OURS, OURS_SCORES, r.lines, r.scores, digits=r.digits, where="moses2 < in")
    msg = str(e.value)
    assert isinstance(e.value, CliError) and "\n" not in msg
    assert msg.startswith("moses2 < in: line 2: moses2 found a better translation") and "-1.500 > ours -2.000" in msg


def test_moses_v1_better_lines_are_counted_not_fatal():
    c = peer_identity("moses", OURS, OURS_SCORES, ["a b", "c z", "e f", "g y"], [-1.0, -1.5, -3.0, -4.0005])
    assert (c.identical, c.ties, c.ours_higher) == (2, 1, 0)
    assert c.theirs_higher == [(1, -2.0, -1.5)]


def test_a_tie_is_one_unit_of_the_printed_digit():
    # Moses2 printing 3 decimals: -2.001 against ours -2.0 is a tie; -1.998 (2 units) is better than ours
    assert peer_identity("moses2", ["x"], [-2.0], ["y"], [-2.001], digits=3).ties == 1
    with pytest.raises(ResultMismatch):
        peer_identity("moses2", ["x"], [-2.0], ["y"], [-1.998], digits=3)
    assert printed_digits(["-1.5", "-2.125", "3"]) == 3 and printed_digits(["7"]) == 3
    with pytest.raises(ValueError, match="one line per sentence"):
        peer_identity("moses2", ["x"], [-2.0], [], [])


def test_moses_v1_precision_is_each_lines_own(tmp_path):
    """Moses v1 prints 6 significant digits with trailing zeros dropped (-566.57, -232.577, -9.12345): a line ties
    within one unit of its own last digit, not of the most decimals any line has (which called 56 of 200 lines of
    the oracle's dev verses 'Moses higher' where they tie)."""
    r = _peer_output(tmp_path, ["-566.57 a x", "-9.12345 c x", "-3.5 e f", "-4 g y"])
    assert r.digits == 5 and r.line_digits == [2, 5, 1, None]
    ours, scores = ["a b", "c d", "e f", "g h"], [-566.570214, -9.123446, -3.5, -4.00001]
    c = peer_identity("moses", ours, scores, r.lines, r.scores, digits=r.digits, line_digits=r.line_digits)
    assert (c.identical, c.ties, c.ours_higher, len(c.theirs_higher)) == (1, 3, 0, 0)
    c = peer_identity("moses", ours, [-566.59, -9.1236, -3.5, -4.0], r.lines, r.scores, digits=r.digits,
                      line_digits=r.line_digits)  # beyond one unit of the line's last digit: Moses higher
    assert [i for i, _, _ in c.theirs_higher] == [0, 1]
    with pytest.raises(ValueError, match="printed precisions"):
        peer_identity("moses", ["x"], [-1.0], ["y"], [-1.0], line_digits=[3, 3])
