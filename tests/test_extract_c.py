"""The C phrase extractor (csrc/tm/extract.c) against the pure-Python reference (`tm extract --plain`): the same
extract, extract.inv and orientation bytes, the same one-line errors."""
from __future__ import annotations

import gzip
import lzma
import random
import sys

import pytest

from smtbench.tm.align import AlignmentFormatError
from smtbench.tm.extract import extract_files, lex_files

from conftest import HAVE_ORACLE, ORACLE


def run_both(d, f: str, e: str, al: str, max_len: int = 7, gz: bool = False) -> list[bytes]:
    """Write the three inputs, extract with both paths; assert the same bytes, return the C path's files."""
    for name, text in (("f", f), ("e", e), ("al", al)):
        (d / name).write_bytes(text.encode("utf-8"))
    got = []
    for plain in (False, True):
        sfx = ".gz" if gz else ""
        outs = [str(d / f"{k}{int(plain)}{sfx}") for k in ("ext", "inv", "o")]
        lex = (str(d / f"lex.f2e.{int(plain)}"), str(d / f"lex.e2f.{int(plain)}"))
        n = extract_files(str(d / "f"), str(d / "e"), str(d / "al"), outs[0], outs[1], max_len,
                          orientation_out=outs[2], plain=plain, lex_out=lex)
        rd = (lambda p: gzip.open(p, "rb").read()) if gz else (lambda p: open(p, "rb").read())
        files = [rd(p) for p in outs]
        assert n == files[0].count(b"\n") == files[1].count(b"\n") == files[2].count(b"\n")
        got.append(files + [open(p, "rb").read() for p in lex])
    assert got[0] == got[1]
    # the lexical tables as lex_files writes them in a pass of its own (C: counted in the extraction's pass)
    lex_files(str(d / "f"), str(d / "e"), str(d / "al"), str(d / "lf"), str(d / "le"))
    assert got[0][3:] == [(d / "lf").read_bytes(), (d / "le").read_bytes()]
    return got[0]


def random_alignment(rng: random.Random, nf: int, ne: int) -> str:
    """Crossing links, unaligned words at either edge, one-to-many both ways, now and then a duplicate point."""
    pts = [(rng.randrange(nf), rng.randrange(ne)) for _ in range(rng.randrange(0, nf + ne + 1))] if nf and ne else []
    if pts and rng.random() < 0.2:
        pts.append(pts[0])
    rng.shuffle(pts)
    return " ".join(f"{i}-{j}" for i, j in pts)


def test_shipped_corpus_random_alignments(tmp_path):
    """400 verses of the shipped corpus with seeded random alignments (crossings, edges unaligned, duplicates)."""
    from smtbench import data
    from pathlib import Path
    tsv = Path(__file__).resolve().parent.parent / "resources" / "bible-es-en" / "es-en.tsv.xz"
    vs = data.read_tsv(tsv)[:400]
    rng = random.Random(43)
    fs, es, als = [], [], []
    for v in vs:
        f, e = v.es.split()[:rng.randrange(0, 14)], v.en.split()[:rng.randrange(0, 14)]
        fs.append(" ".join(f))
        es.append(" ".join(e))
        als.append(random_alignment(rng, len(f), len(e)))
    out = run_both(tmp_path, "\n".join(fs) + "\n", "\n".join(es) + "\n", "\n".join(als) + "\n", gz=True)
    assert len(out[0]) > 10_000


@pytest.mark.skipif(not HAVE_ORACLE, reason="the Moses oracle (../shared/oracles/moses-bible-dev) is not here")
def test_oracle_alignment_slice(tmp_path):
    """The first 300 lines of the oracle's corpus and its grow-diag-final-and alignment (Moses' symal)."""
    def head(name: str) -> str:
        with lzma.open(ORACLE / name, "rt", encoding="utf-8", newline="\n") as fh:
            return "".join(next(fh) for _ in range(300))
    run_both(tmp_path, head("train.es.xz"), head("train.en.xz"), head("train.aligned.grow-diag-final-and.xz"))


@pytest.mark.parametrize("max_len", [0, 1, 2, 3, 7, 50])
def test_hostile_alignments(tmp_path, max_len):
    """Edges unaligned, empty lines, phrases exactly at and just over the length limit, a last line without its
    newline."""
    f = "a b c d e f g h\n\nu\nx  y\tz\np q r s\nw"
    e = "A B C D E F G H\n\n\nX Y\nP Q R S T\nW"
    al = "1-1 2-2 3-3 4-4 5-5 6-6\n\n\n0-1 2-0\n0-3 3-0 1-1 1-2\n0-0"
    run_both(tmp_path, f, e, al, max_len)


def test_words_split_at_space_and_tab_only(tmp_path):
    """The word rule (ioutil.words, as the decoder and Moses): every character str.split() would split at that a
    line may hold (the line rule refuses ASCII controls) but space and TAB is a word character, on both sides and
    in both paths; space and TAB runs separate words."""
    from smtbench.ioutil import words
    spaces = [chr(c) for c in range(sys.maxunicode + 1)
              if chr(c).isspace() and not (c < 0x20 or c == 0x7f) and c != 0x20]
    assert "\u3000" in spaces and "\x85" in spaces and "\xa0" in spaces and "\u2028" in spaces
    assert all(words(f"a{s}b \t c") == [f"a{s}b", "c"] for s in spaces)
    f = "".join(f"a{s}b c\n" for s in spaces)
    e = "".join(f"x{s}y \tz\n" for s in spaces)
    al = "".join("0-0 1-1\n" for _ in spaces)
    out = run_both(tmp_path, f, e, al)
    got = out[0].decode("utf-8").split("\n")
    for s in spaces:
        assert f"a{s}b ||| x{s}y ||| 0-0" in got and f"a{s}b c ||| x{s}y z ||| 0-0 1-1" in got
    # a point past the two words a line has is refused in both paths (no split at the non-ASCII space)
    with pytest.raises(AlignmentFormatError, match=r"al:1: alignment point 0-2 outside a 2x2"):
        run_both(tmp_path, "a\xa0b c\n", "x y\n", "0-2\n")


@pytest.mark.parametrize("al, msg", [
    ("0-0\n0-3\n", r"al:2: alignment point 0-3 outside a 1x1 sentence pair"),
    ("0-0\n1-0\n", r"al:2: alignment point 1-0 outside a 1x1 sentence pair"),
    ("0-0\n0-0 x\n", r"al:2: bad alignment point 'x'"),
    ("0-0\n0-0-0\n", r"al:2: bad alignment point '0-0-0'"),
    ("0-0\n0-\n", r"al:2: bad alignment point '0-'"),
    ("0-0\n99999999999999999999-0\n", r"al:2: alignment point 99999999999999999999-0 outside"),
])
@pytest.mark.parametrize("block", [1, 1024])
def test_errors_are_the_reference_ones(tmp_path, monkeypatch, al, msg, block):
    """The same message from both paths, no output left; with blocks of one sentence the error comes while the
    previous block's output is still being written."""
    import smtbench.tm.extract as X
    monkeypatch.setattr(X, "BLOCK", block)
    (tmp_path / "f").write_text("a b\nc\n")
    (tmp_path / "e").write_text("x y\nz\n")
    (tmp_path / "al").write_text(al)
    for plain in (False, True):
        for lex in (None, (str(tmp_path / "lf"), str(tmp_path / "le"))):
            with pytest.raises(AlignmentFormatError, match=msg):
                extract_files(*(str(tmp_path / x) for x in ("f", "e", "al", "x.gz", "xi.gz")), plain=plain,
                              lex_out=lex)
            assert sorted(p.name for p in tmp_path.iterdir()) == ["al", "e", "f"]


def test_digits_python_accepts_are_kept(tmp_path):
    """An alignment token the C parser leaves to the reference (Arabic-Indic digits, which int() reads) between
    ordinary sentences: the reference writes that sentence, C the others, in order."""
    run_both(tmp_path, "a b\nc d\ne f\n", "x y\nz w\nu v\n", "0-0 1-1\n\u0660-\u0661 1-0\n0-0 1-1\n")


def test_no_inverse(tmp_path):
    (tmp_path / "f").write_text("a b\n")
    (tmp_path / "e").write_text("x y\n")
    (tmp_path / "al").write_text("0-0 1-1\n")
    n = extract_files(*(str(tmp_path / x) for x in ("f", "e", "al", "x.gz")), None)
    assert n == 3 and gzip.open(tmp_path / "x.gz", "rt").read().count("\n") == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["al", "e", "f", "x.gz"]


def test_blocks_are_seamless(tmp_path, monkeypatch):
    """Blocks of 3 sentences (and a reference sentence at a block's edge) write what one block writes."""
    import smtbench.tm.extract as X
    monkeypatch.setattr(X, "BLOCK", 3)
    f = "".join(f"a{i} b c\n" for i in range(10))
    e = "".join(f"x{i} y\n" for i in range(10))
    al = "".join(("\u0661-0 2-1\n" if i in (2, 3) else "0-0 2-1\n") for i in range(10))
    run_both(tmp_path, f, e, al)


def test_lexical_tables_counted_in_the_extraction_pass(tmp_path, monkeypatch):
    """lex.f2e / lex.e2f from the C pass (flag 4) as lexical_counts writes them: a word on both sides, the word
    NULL in a sentence (counted with the unaligned words' NULL, as the reference's dictionaries do), words one the
    prefix of another, non-ASCII order by code point, unaligned words at both edges, a line without points, a
    sentence left to the reference (Arabic-Indic digits) counted through sb_extract_lex_points, blocks of 2."""
    import smtbench.tm.extract as X
    monkeypatch.setattr(X, "BLOCK", 2)
    f = "NULL a ab\tZ\nb é a\n\nz a\nq r\n"
    e = "a NULL x\ny Y a\nw\nv\nq q\n"
    al = "1-0 2-0 3-2\n0-2 2-1\n\n\n\u0660-\u0661 1-1\n"
    out = run_both(tmp_path, f, e, al)
    f2e = out[3].decode("utf-8").splitlines()
    # c(NULL, NULL) = 2 (E's unaligned NULL, F's unaligned NULL) of c(NULL) = 6 (5 unaligned E words + F's NULL)
    assert "NULL NULL 0.3333333" in f2e and "q NULL 0.1666667" in f2e and "x Z 1.0000000" in f2e
    assert f2e == sorted(f2e, key=lambda line: (line.split(" ")[1], line.split(" ")[0]))
