"""`tm extract --phrase-table`: the phrase pairs handed to the scorer as records (no extract file between) give
the table `tm extract` + `tm score` write, with the same lexical and reordering tables; bad input and absurd
options are refused in one line before any output is published."""
from __future__ import annotations

import gzip

import pytest

from smtbench.cli import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """300 verses of the shipped corpus, synthetic alignment (tests/toy_models.py), with our extract + lex files."""
    from toy_models import aligned_corpus
    return aligned_corpus(tmp_path_factory.mktemp("tables"), 300, 5)


def _text(path):
    return gzip.open(path).read() if str(path).endswith(".gz") else path.read_bytes()


def _two_steps(corpus, out, threads, memory, smoothing, extra=()):
    """The reference: tm extract (plain extract file) then tm score on it."""
    assert main(["tm", "extract", "--src", str(corpus / "f"), "--tgt", str(corpus / "e"), "--align",
                 str(corpus / "al"), "--outdir", str(out), "--no-inverse", "--uncompressed", "-q",
                 "--reordering-table", str(out / "rt.gz"), "--threads", str(threads), *extra]) == 0
    assert main(["tm", "score", "--extract", str(out / "extract"), "--lex-f2e", str(out / "lex.f2e"),
                 "--lex-e2f", str(out / "lex.e2f"), "--out", str(out / "pt.gz"), "--threads", str(threads),
                 "--memory", memory, "--smoothing", smoothing]) == 0


@pytest.mark.parametrize("threads, memory, smoothing, block", [
    (1, "256M", "none", 1024), (2, "256M", "none", 7), (3, "1M", "none", 7), (2, "1M", "kn", 1024)])
def test_same_tables_as_extract_then_score(corpus, tmp_path, monkeypatch, threads, memory, smoothing, block):
    """Records of many blocks over several buffers (--threads), runs written (1M: the scorer spills) or kept in
    memory, Kneser-Ney: the same table, lexical tables and reordering table as the two steps."""
    import smtbench.tm.extract as X
    monkeypatch.setattr(X, "BLOCK", block)
    ref, out = tmp_path / "ref", tmp_path / "one"
    _two_steps(corpus, ref, threads, memory, smoothing)
    assert main(["tm", "extract", "--src", str(corpus / "f"), "--tgt", str(corpus / "e"), "--align",
                 str(corpus / "al"), "--outdir", str(out), "-q", "--phrase-table", str(out / "pt.gz"),
                 "--reordering-table", str(out / "rt.gz"), "--threads", str(threads), "--memory", memory,
                 "--smoothing", smoothing]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["lex.e2f", "lex.f2e", "pt.gz", "rt.gz"]  # no extract file
    for name in ("pt.gz", "rt.gz", "lex.f2e", "lex.e2f"):
        assert _text(out / name) == _text(ref / name), name
    assert _text(out / "pt.gz").count(b"\n") > 1000


def test_plain_table_and_orientation_file(corpus, tmp_path):
    """A table named without .gz is plain text (the temporary names it is written under say nothing); extract.o
    is written beside it when asked."""
    out = tmp_path / "one"
    assert main(["tm", "extract", "--src", str(corpus / "f"), "--tgt", str(corpus / "e"), "--align",
                 str(corpus / "al"), "--outdir", str(out), "-q", "--phrase-table", str(out / "pt"),
                 "--orientation"]) == 0
    ref = tmp_path / "ref"
    _two_steps(corpus, ref, 1, "256M", "none", ["--orientation"])
    assert (out / "pt").read_bytes() == _text(ref / "pt.gz")
    assert _text(out / "extract.o.gz") == _text(ref / "extract.o")


def test_a_sentence_left_to_the_reference(corpus, tmp_path):
    """An alignment token the C extractor leaves to the Python reference (digits Python reads and C does not: its
    lines are parsed into the scorer as text) gives the same table as the two steps."""
    d = tmp_path / "c"
    d.mkdir()
    for name in ("f", "e"):
        (d / name).write_bytes((corpus / name).read_bytes())
    lines = (corpus / "al").read_text().splitlines()
    lines[3] = lines[3].replace("0-0", "\u0660-\u0660", 1)  # ARABIC-INDIC DIGIT ZERO
    assert "\u0660" in lines[3]
    (d / "al").write_text("\n".join(lines) + "\n")
    ref, out = tmp_path / "ref", tmp_path / "one"
    _two_steps(d, ref, 2, "256M", "none")
    assert main(["tm", "extract", "--src", str(d / "f"), "--tgt", str(d / "e"), "--align", str(d / "al"),
                 "--outdir", str(out), "-q", "--phrase-table", str(out / "pt.gz"), "--threads", "2"]) == 0
    assert _text(out / "pt.gz") == _text(ref / "pt.gz")
    assert _text(out / "lex.f2e") == _text(ref / "lex.f2e")


@pytest.mark.parametrize("case", ["bad point", "outside", "length", "plain", "memory", "same file", "no table"])
def test_refused_in_one_line_before_any_output(corpus, tmp_path, capsys, case):
    d = tmp_path / "c"
    d.mkdir()
    for name in ("f", "e", "al"):
        (d / name).write_bytes((corpus / name).read_bytes())
    lines = (d / "al").read_text().splitlines()
    if case == "bad point":
        lines[5] = lines[5] + " 1-x"
    if case == "outside":
        lines[5] = lines[5] + " 999-0"
    (d / "al").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    extra = {"length": ["--max-length", "9"], "plain": ["--plain"], "memory": ["--memory", "12Q"],
             "same file": ["--reordering-table", str(out / "pt.gz")], "no table": ["--smoothing", "kn"]}.get(case, [])
    table = [] if case == "no table" else ["--phrase-table", str(out / "pt.gz")]  # (--smoothing without a scorer)
    rc = main(["tm", "extract", "--src", str(d / "f"), "--tgt", str(d / "e"), "--align", str(d / "al"),
               "--outdir", str(out), "-q", *table, *extra])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1, err
    want = {"bad point": "al:6", "outside": "al:6", "length": "--max-length 9", "plain": "--plain",
            "memory": "--memory", "same file": "pt.gz", "no table": "--smoothing"}[case]
    assert want in err, err
    assert not out.exists() or not [p for p in out.iterdir()], list(out.iterdir())


@pytest.mark.parametrize("member_bytes", [7, 1000, None])
def test_write_parts_members_concatenate_to_the_parts(tmp_path, monkeypatch, member_bytes):
    """tm.score.write_parts: parts deflated as ranges of MEMBER_BYTES (a member may end inside a line) or whole, in
    parallel, written in order: the .gz reads back as the parts concatenated; empty parts and an empty table too."""
    from smtbench.tm import score as S
    parts = [tmp_path / f"part.{i}" for i in range(4)]
    texts = [b"".join(b"f%d ||| e%d ||| 0.5\n" % (i, j) for j in range(n)) for i, n in enumerate((50, 0, 3, 120))]
    for p, t in zip(parts, texts):
        p.write_bytes(t)
    out = tmp_path / "t.gz"
    S.write_parts(parts, str(out), threads=3, member_bytes=member_bytes)
    assert gzip.open(out).read() == b"".join(texts)
    for p in parts:
        p.write_bytes(b"")
    S.write_parts(parts, str(out), threads=2, member_bytes=member_bytes)
    assert gzip.open(out).read() == b""
    plain = tmp_path / "t"
    S.write_parts(parts[:1], str(plain), gz=True)  # (a name that says nothing: gz decides)
    assert gzip.open(plain).read() == b""
