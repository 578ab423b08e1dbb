"""One line rule for every reader of line-parallel text (issue 41; CONTRIBUTING.md "Text lines"): a line ends at
``\\n`` (a CRLF's ``\\r`` removed); a ``\\r`` anywhere else, a NUL or another ASCII control character but TAB is
refused as ``path:line`` (exit 2); U+2028 and U+0085 are ordinary characters inside a line; a BOM at a file's start
is dropped. Each reader, Python and C, is given each hostile input here; ARPA keeps KenLM's rule (space, \\t, \\r
blank; \\x0b, \\x0c inside a word). A corrupt .gz or truncated .xz is one line naming the file."""
from __future__ import annotations

import gzip
import io
import lzma
import re
from pathlib import Path

import pytest

from toy_models import TOY_ARPA, toy_phrase_model

ROOT = Path(__file__).resolve().parent.parent
BOM = b"\xef\xbb\xbf"
#: what each hostile input puts between two words of one line (BOM: before the file)
KINDS = {"cr": b"\r", "nul": b"\x00", "ff": b"\x0c", "u2028": "\u2028".encode(), "u0085": "\u0085".encode(),
         "bom": None}
REFUSED = {"cr": "a carriage return (\\r) inside the line", "nul": "a NUL byte inside the line",
           "ff": "the control character 0x0c inside the line"}


def hostile(lines: list[str], kind: str, at: int, crlf: bool = False) -> bytes:
    """``lines`` as a file, line ``at`` (1-based) with the kind's character between its first two words."""
    out = []
    for i, line in enumerate(lines, 1):
        b = line.encode()
        if i == at and KINDS[kind] is not None:
            head, _, tail = b.partition(b" ")
            b = head + KINDS[kind] + tail
        out.append(b + (b"\r\n" if crlf else b"\n"))
    data = b"".join(out)
    return BOM + data if kind == "bom" else data


def kept(lines: list[str], kind: str, at: int) -> list[str]:
    """The lines the rule reads from ``hostile(lines, kind, at)`` where it accepts them."""
    return hostile(lines, kind, at).removeprefix(BOM).decode().split("\n")[:-1]


def cli(capsys, *args) -> tuple[int, str, str]:
    from smtbench.cli import main
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def refused(rc: int, err: str, where: str, what: str = "", progress: str = "") -> None:
    """exit 2 and one error line (after ``progress``, the step lines a command prints before it), no traceback"""
    assert rc == 2, err
    assert err.startswith(progress), err
    err = err[len(progress):]
    assert err.startswith("smtbench: error: ") and err.count("\n") == 1, err
    assert where in err and what in err, err


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    from smtbench.decode.model import PhraseModel
    d = tmp_path_factory.mktemp("toy")
    ini = toy_phrase_model(d)
    return {"dir": d, "ini": ini, "model": PhraseModel(ini)}


# ---------------------------------------------------------------- the reader itself
@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
@pytest.mark.parametrize("kind", KINDS)
def test_open_text(tmp_path, kind, suffix):
    from smtbench.ioutil import TextFormatError, open_text, read_lines
    lines = [f"w{i} x{i} y" for i in range(1, 8)]
    data = hostile(lines, kind, 5)
    p = tmp_path / f"t.txt{suffix}"

    def put(data: bytes) -> None:
        p.write_bytes(gzip.compress(data) if suffix == ".gz" else lzma.compress(data) if suffix == ".xz" else data)
    put(data)
    if kind in REFUSED:
        with pytest.raises(TextFormatError, match=re.escape(f"{p}:5: {REFUSED[kind]}")):
            read_lines(p)
        return
    got = read_lines(p)
    assert got == kept(lines, kind, 5) and len(got) == 7
    assert got[0] == "w1 x1 y"  # no BOM
    put(hostile(lines, kind, 5, crlf=True))  # a CRLF file reads as the LF one
    assert read_lines(p) == got
    with open_text(p) as fh:  # the text-file interface the callers use
        assert fh.readline() == got[0] + "\n" and fh.readlines()[-1] == got[-1] + "\n" and fh.lineno == 7


def test_open_text_details(tmp_path, monkeypatch):
    from smtbench.ioutil import TextFormatError, read_lines
    p = tmp_path / "t.txt"
    for data, want in ((b"a\r\nb", ["a", "b"]), (b"", []), (b"\n\n", ["", ""]), (b"a\tb\n", ["a\tb"]),
                       ("a\u2029b\u00a0c\ufeffd\n".encode(), ["a\u2029b\u00a0c\ufeffd"])):
        p.write_bytes(data)
        assert read_lines(p) == want
    for data, line, what in ((b"a\nb\r", 2, REFUSED["cr"]), (b"a\r\r\nb\n", 1, REFUSED["cr"]),
                             (b"a\n\x7f\n", 2, "the control character 0x7f"),
                             (b"ok\nb \xff c\n", 2, "invalid UTF-8 (byte 0xff at column 3)"),
                             (b"x\n" * 300_000 + b"y\x1bz\n", 300_001, "the control character 0x1b")):  # 2nd block
        p.write_bytes(data)
        with pytest.raises(TextFormatError, match=re.escape(f"{p}:{line}: {what}")):
            read_lines(p)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(BOM + b"a\r\nb\n")))
    assert read_lines("-") == ["a", "b"]


# ---------------------------------------------------------------- corpora
def _pair(tmp_path, kind: str, side: str = "f", at: int = 12, n: int = 20) -> tuple[Path, Path, list[str], list[str]]:
    f = [f"f{i} src words {i}" for i in range(1, n + 1)]
    e = [f"e{i} tgt words {i}" for i in range(1, n + 1)]
    fp, ep = tmp_path / "c.fr", tmp_path / "c.en"
    fp.write_bytes(hostile(f, kind, at) if side == "f" else "".join(s + "\n" for s in f).encode())
    ep.write_bytes(hostile(e, kind, at) if side == "e" else "".join(s + "\n" for s in e).encode())
    return fp, ep, f, e


def _tag(line: str) -> str:
    return re.sub(r"\D", "", line.split()[0])


@pytest.mark.parametrize("kind", KINDS)
def test_data_prepare(tmp_path, capsys, kind):
    fp, ep, _, _ = _pair(tmp_path, kind, side="e")
    out = tmp_path / "out"
    rc, so, err = cli(capsys, "data", "prepare", "--text", fp, ep, "--f", "fr", "--e", "en", "--no-tokenize",
                      "--casing", "keep", "--split", "tail", "--dev", "2", "--test", "2", "--outdir", out)
    if kind in REFUSED:
        refused(rc, err, f"{ep}:12: ", REFUSED[kind])
        assert not out.exists() or not any(out.iterdir())
        return
    assert rc == 0, err
    assert so.strip() == "train=16 dev=2 test=2"
    for sp, n in (("train", 16), ("dev", 2), ("test", 2)):
        fs = (out / f"{sp}.fr").read_text(encoding="utf-8").split("\n")[:-1]
        es = (out / f"{sp}.en").read_text(encoding="utf-8").split("\n")[:-1]
        assert len(fs) == len(es) == n and [_tag(a) for a in fs] == [_tag(b) for b in es]  # pairs aligned
    first = (out / "train.en").read_text(encoding="utf-8").split("\n")[0]
    assert first == "e1 tgt words 1"  # the BOM is not a token


def test_data_prepare_lone_cr_does_not_shift(tmp_path, capsys):
    """Finding 1, shrunk: a \\r inside line 12 of the source and line 3 of the target of 20 lines once gave
    exit 0 with every pair from line 3 to 11 shifted by one; now the first one read is refused."""
    f = [f"f{i} a b" for i in range(1, 21)]
    e = [f"e{i} c d" for i in range(1, 21)]
    fp, ep = tmp_path / "c.es", tmp_path / "c.en"
    fp.write_bytes(hostile(f, "cr", 12))
    ep.write_bytes(hostile(e, "cr", 3))
    out = tmp_path / "out"
    rc, _, err = cli(capsys, "data", "prepare", "--text", fp, ep, "--f", "es", "--e", "en", "--no-tokenize",
                     "--split", "tail", "--dev", "2", "--test", "2", "--outdir", out)
    refused(rc, err, f"{fp}:12: ", REFUSED["cr"])
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("kind", KINDS)
def test_tm_train_corpus_step(tmp_path, capsys, kind):
    fp, ep, f, e = _pair(tmp_path, kind, side="f", at=7)
    out = tmp_path / "model"
    rc, _, err = cli(capsys, "tm", "train", "--corpus", tmp_path / "c", "--f", "fr", "--e", "en", "--outdir", out,
                     "--step", "corpus")
    if kind in REFUSED:
        refused(rc, err, f"{fp}:7: ", REFUSED[kind], progress="tm train: step corpus\n")
        assert not (out / "corpus.clean.fr").exists()
        return
    assert rc == 0, err
    fs = (out / "corpus.clean.fr").read_text(encoding="utf-8").split("\n")[:-1]
    es = (out / "corpus.clean.en").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(fs) == len(es) == 20 and [_tag(a) for a in fs] == [_tag(b) for b in es]
    assert fs[0] == "f1 src words 1"


@pytest.mark.parametrize("kind", ["cr", "nul", "u2028", "bom"])
def test_aligner_input(tmp_path, kind):
    from smtbench.ioutil import TextFormatError
    from smtbench.tm.align import run_eflomal
    fp, ep, f, _ = _pair(tmp_path, kind, side="f", at=4, n=12)
    fwd, rev = tmp_path / "fwd", tmp_path / "rev"
    if kind in REFUSED:
        with pytest.raises(TextFormatError, match=re.escape(f"{fp}:4: {REFUSED[kind]}")):
            run_eflomal(str(fp), str(ep), str(fwd), str(rev), n_iterations=1, n_samplers=1, model=1)
        assert not fwd.exists()
        return
    run_eflomal(str(fp), str(ep), str(fwd), str(rev), n_iterations=1, n_samplers=1, model=1)
    assert len(fwd.read_text().split("\n")) == 13 and len(rev.read_text().split("\n")) == 13


# ---------------------------------------------------------------- references and hypotheses
REFS = ["the cat sat on the mat", "a dog ran in the park", "birds fly south", "it is raining today",
        "we like green tea", "the sun is warm", "old trees grow tall", "she reads many books",
        "the river is wide", "he plays the piano"]
HYPS = ["the cat sat on a mat", "a dog ran in park", "birds fly north", "it is raining now", "we like tea",
        "the sun is hot", "old trees are tall", "she reads books", "the river is wide", "he plays piano"]


@pytest.mark.parametrize("kind", KINDS)
def test_bleu(tmp_path, capsys, kind):
    import sacrebleu
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_bytes(hostile(HYPS, kind, 4))
    ref.write_text("".join(r + "\n" for r in REFS))
    rc, out, err = cli(capsys, "bleu", "-r", ref, "-y", hyp, "--tokenize", "none")
    if kind in REFUSED:
        refused(rc, err, f"{hyp}:4: ", REFUSED[kind])
        return
    assert rc == 0, err
    want = sacrebleu.corpus_bleu([h.strip() for h in kept(HYPS, kind, 4)], [REFS], tokenize="none").score
    assert out.strip().split("\n")[-1] == f"{want:.2f}"


@pytest.mark.parametrize("kind", KINDS)
def test_tune_reads_hypotheses_and_references(tmp_path, kind):
    """tune's dev BLEU (sacrebleu_tok), its references (load_references, read_lines) and its --sentences subset:
    one U+2028 in a dev word once made splitlines() pair streams of different lengths (finding 2)."""
    import sacrebleu

    from smtbench.ioutil import TextFormatError, read_lines
    from smtbench.tune.bleu import load_references
    from smtbench.tune.loop import _subset, sacrebleu_tok
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_bytes(hostile(HYPS, kind, 3))
    ref.write_bytes(hostile(REFS, kind, 3))
    if kind in REFUSED:
        for call in (lambda: sacrebleu_tok(hyp, [REFS]), lambda: load_references([str(ref)]),
                     lambda: _subset(str(hyp), [str(ref)], 5, tmp_path)):
            with pytest.raises(TextFormatError, match=re.escape(f":3: {REFUSED[kind]}")):
                call()
        return
    refs = read_lines(ref)
    assert len(refs) == 10 and len(load_references([str(ref)])) == 10
    want = sacrebleu.corpus_bleu(kept(HYPS, kind, 3), [kept(REFS, kind, 3)], tokenize="none").score
    assert sacrebleu_tok(hyp, [refs]) == pytest.approx(want)
    src, refs5 = _subset(str(hyp), [str(ref)], 5, tmp_path)
    assert read_lines(src) == kept(HYPS, kind, 3)[:5] and read_lines(refs5[0]) == kept(REFS, kind, 3)[:5]


@pytest.mark.parametrize("kind", KINDS)
def test_nbest(tmp_path, kind):
    from smtbench.ioutil import TextFormatError
    from smtbench.tune.bleu import Reference
    from smtbench.tune.pool import NbestPool
    lines = [f"{i // 2} ||| w{i} hyp text ||| F0= -{i}.5 -1 ||| -{i}" for i in range(8)]
    nb = tmp_path / "run1.nbest"
    nb.write_bytes(hostile([ln.replace(" ||| w", " ||| w ", 1) for ln in lines], kind, 6))
    pool = NbestPool([Reference(["w hyp text"])] * 4, [("F0", 2)])
    if kind in REFUSED:
        with pytest.raises(TextFormatError, match=re.escape(f"{nb}:6: {REFUSED[kind]}")):
            pool.add_nbest(nb)
        return
    read, new = pool.add_nbest(nb)
    assert read == 8 and new == 8


# ---------------------------------------------------------------- moses.ini, decoder input, postprocess
@pytest.mark.parametrize("kind", KINDS)
def test_moses_ini(tmp_path, toy, kind):
    from smtbench.decode.ini import load_ini
    from smtbench.ioutil import TextFormatError
    lines = toy["ini"].read_text().split("\n")[:-1]
    lines.insert(3, "# a comment line")
    ini = tmp_path / "moses.ini"
    ini.write_bytes(hostile(lines, kind, 4))
    if kind in REFUSED:
        with pytest.raises(TextFormatError, match=re.escape(f"{ini}:4: {REFUSED[kind]}")):
            load_ini(ini)
        return
    want = load_ini(toy["ini"]).weight_vector()
    assert load_ini(ini).weight_vector() == want
    ini.write_bytes(hostile(lines, kind, 4, crlf=True))
    assert load_ini(ini).weight_vector() == want


SENTS = ["s0 s1 s2", "s3 s0 s5 s7", "s7", "s2 s2", "s5 s6"]


@pytest.mark.parametrize("kind", KINDS)
def test_decoder_input(tmp_path, capsys, toy, kind):
    from smtbench.decode.cube import CubeDecoder
    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_bytes(hostile(SENTS, kind, 2))
    rc, _, err = cli(capsys, "decode", "cube", "-f", toy["ini"], "-i", inp, "-o", out, "--no-progress")
    if kind in REFUSED:
        refused(rc, err, f"{inp}:2: ", REFUSED[kind])
        assert not out.exists()
        return
    assert rc == 0, err
    got = out.read_text(encoding="utf-8").split("\n")
    assert len(got) == 6 and got[-1] == ""  # one output line per input line
    dec = CubeDecoder(toy["model"], pop_limit=1000, stack_size=100)
    assert got[0] == dec.translate(SENTS[0]).best.text  # the BOM is not a word
    assert got[2] == dec.translate(SENTS[2]).best.text


@pytest.mark.parametrize("kind", KINDS)
def test_postprocess(tmp_path, capsys, monkeypatch, kind):
    inp, out = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_bytes(hostile(HYPS, kind, 9))
    rc, _, err = cli(capsys, "postprocess", "-i", inp, "-o", out, "--detruecase")
    if kind in REFUSED:
        refused(rc, err, f"{inp}:9: ", REFUSED[kind])
        assert not out.exists()
        return
    assert rc == 0, err
    got = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(got) == 10 and got[0] == "The cat sat on a mat" and got[9] == "He plays piano"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(hostile(HYPS, kind, 9))))
    rc, so, err = cli(capsys, "postprocess", "--detruecase")  # standard input: the same rule
    assert rc == 0 and so.split("\n")[:-1] == got, err


# ---------------------------------------------------------------- C readers: phrase table, extract, lex
def _ini_for(tmp_path, toy, pt) -> Path:
    ini = tmp_path / f"{pt.stem}.ini"
    ini.write_text(toy["ini"].read_text().replace(str(toy["dir"] / "pt.txt"), str(pt)))
    return ini


def _texts(ini, toy, sents, nbest=0) -> list[list[str]]:
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.model import PhraseModel
    dec = CubeDecoder(PhraseModel(ini, lm=toy["model"].lm), pop_limit=1000, stack_size=100, nbest=nbest)
    return [[e.text for e in dec.translate(s).entries] for s in sents]


@pytest.mark.parametrize("kind", [*KINDS, "crlf"])
def test_phrase_table(tmp_path, toy, kind):
    """The C table reader (model load and binarizer): a hostile byte inside a target phrase of line 2."""
    from smtbench.decode.model import ModelFormatError, PhraseModel
    from smtbench.tm.binarize import BinaryTableError, build
    lines = (toy["dir"] / "pt.txt").read_text().split("\n")[:-1]
    src = lines[1].split(" ||| ")[0]
    lines[1] = lines[1].replace(" ||| ", " ||| zz ", 1)  # target "zz <words>": the hostile byte after zz
    pt = tmp_path / "pt.txt"
    if kind in ("bom", "crlf"):
        pt.write_bytes(hostile(lines, "bom", 2, crlf=kind == "crlf"))
    else:
        pt.write_bytes(b"".join((ln.encode().replace(b" ||| zz ", b" ||| zz" + KINDS[kind], 1) if i == 1 else
                                 ln.encode()) + b"\n" for i, ln in enumerate(lines)))
    ini = _ini_for(tmp_path, toy, pt)
    if kind in REFUSED:
        with pytest.raises(BinaryTableError, match=re.escape(f"{pt}:2: {REFUSED[kind]}")):
            build(pt, tmp_path / "x.bin")
        with pytest.raises(ModelFormatError, match=re.escape(f"{pt}:2: {REFUSED[kind]}")):
            PhraseModel(ini, lm=toy["model"].lm)
        return
    assert build(pt, tmp_path / "x.bin")["phrase_pairs"] == len(lines)
    if kind in ("bom", "crlf"):  # the plain table's model exactly: its first phrase is found as written
        plain = tmp_path / "plain.txt"
        plain.write_text("".join(ln + "\n" for ln in lines))
        sents = [lines[0].split(" ||| ")[0], *SENTS]
        assert _texts(ini, toy, sents, 20) == _texts(_ini_for(tmp_path, toy, plain), toy, sents, 20)
        return
    # U+2028 / U+0085: an ordinary character, "zz<it>word" one target word
    word = "zz" + KINDS[kind].decode() + lines[1].split(" ||| ")[1].split()[1]
    hyps = [h for texts in _texts(ini, toy, [src], 200) for h in texts]
    assert any(word in h.split(" ") for h in hyps), (word, hyps[:5])


@pytest.mark.parametrize("kind", KINDS)
def test_reordering_table(tmp_path, toy, kind):
    """The same C reader for the reordering table: refused at its line, or the plain table's model exactly."""
    from smtbench.decode.model import ModelFormatError, PhraseModel
    lines = (toy["dir"] / "rt.txt").read_text().split("\n")[:-1]
    rt = tmp_path / "rt.txt"
    rt.write_bytes(hostile(lines, kind, 3) if kind in REFUSED or kind == "bom" else
                   hostile(lines, "bom", 3, crlf=True))  # (U+2028/U+0085 inside a source word: tested on pt.txt)
    ini = tmp_path / "moses.ini"
    ini.write_text(toy["ini"].read_text().replace(str(toy["dir"] / "rt.txt"), str(rt)))
    if kind in REFUSED:
        with pytest.raises(ModelFormatError, match=re.escape(f"{rt}:3: {REFUSED[kind]}")):
            PhraseModel(ini, lm=toy["model"].lm)
        return
    assert _texts(ini, toy, SENTS, 20) == _texts(toy["ini"], toy, SENTS, 20)


LEX_F2E = ["x a 0.6", "y b 0.7", "x NULL 0.1", "y NULL 0.1", "NULL a 0.1", "NULL b 0.1"]   # e f w(e|f)
LEX_E2F = ["a x 0.8", "b y 0.9", "NULL x 0.1", "NULL y 0.1", "a NULL 0.1", "b NULL 0.1"]   # f e w(f|e)
EXTRACT = ["a ||| x ||| 0-0", "a b ||| x ||| 0-0", "b ||| y ||| 0-0", "a ||| x ||| 0-0"]


@pytest.mark.parametrize("kind", [*KINDS, "crlf"])
def test_extract_and_lex(tmp_path, kind):
    """The C extract and lex readers of the phrase scorer (and the Python extract frame beside them)."""
    from smtbench.tm import score as S
    u = KINDS[kind].decode() if kind in ("u2028", "u0085") else ""
    f2e, e2f = tmp_path / "lex.f2e", tmp_path / "lex.e2f"   # words with U+2028 / U+0085 inside are lex words too
    f2e.write_text("".join(x + "\n" for x in LEX_F2E + ([f"x a{u}b 0.5", f"NULL a{u}b 0.1"] if u else [])))
    e2f.write_text("".join(x + "\n" for x in LEX_E2F + ([f"a{u}b x 0.5", f"a{u}b NULL 0.1"] if u else [])))
    ex, out = tmp_path / "extract", tmp_path / "pt.gz"
    ex.write_bytes(hostile(EXTRACT, "bom", 2, crlf=True) if kind == "crlf" else hostile(EXTRACT, kind, 2))
    if kind in REFUSED:
        with pytest.raises(S.PhraseFormatError, match=re.escape(f"{ex}:2: {REFUSED[kind]}")):
            S.score_native(str(ex), str(f2e), str(e2f), str(out), memory=1 << 20)
        assert not out.exists()
        with pytest.raises(ValueError, match=re.escape(f"{ex}:2: {REFUSED[kind]}")):
            S.read_extract_frame(str(ex))
        f2e.write_bytes(hostile(LEX_F2E, kind, 3))  # the lex reader (C) too
        ex.write_text("".join(x + "\n" for x in EXTRACT))
        with pytest.raises(S.PhraseFormatError, match=re.escape(f"{f2e}:3: {REFUSED[kind]}")):
            S.score_native(str(ex), str(f2e), str(e2f), str(out), memory=1 << 20)
        return
    S.score_native(str(ex), str(f2e), str(e2f), str(out), memory=1 << 20)
    got = gzip.open(out, "rt", encoding="utf-8").read().split("\n")[:-1]
    if kind in ("bom", "crlf"):  # exactly the plain extract's table
        plain = tmp_path / "plain"
        plain.write_text("".join(x + "\n" for x in EXTRACT))
        S.score_native(str(plain), str(f2e), str(e2f), str(tmp_path / "ref.gz"), memory=1 << 20)
        assert got == gzip.open(tmp_path / "ref.gz", "rt", encoding="utf-8").read().split("\n")[:-1]
        return
    # line 2's source phrase is the one word "a<U>b": an ordinary character inside a word
    assert sorted(line.split(" ||| ")[0] for line in got) == sorted(["a", f"a{u}b", "b"])


# ---------------------------------------------------------------- ARPA: KenLM's rule, not the line rule
@pytest.mark.parametrize("blank", [b" ", b"\t", b"\r"])
def test_arpa_keeps_kenlm_blanks(tmp_path, blank):
    """KenLM's ARPA reader (lm/read_arpa.cc kARPASpaces) splits at space, \\t, \\r (and \\n) only: a \\r between
    the fields of an ARPA line is a blank there, so it is one here (arpa.c), and the Python helpers that peek at
    ARPA headers (strict=False) do not refuse it."""
    import numpy as np

    from smtbench.lm.arpa import read_arpa, synthetic_label
    from smtbench.tm.train import arpa_order
    plain = tmp_path / "plain.arpa"
    plain.write_text(TOY_ARPA)
    odd = tmp_path / "odd.arpa"
    odd.write_bytes(TOY_ARPA.encode().replace(b"-0.3\t<s> a\t-0.1", b"-0.3" + blank + b"<s>" + blank + b"a\t-0.1")
                    .replace(b"ngram 2=4", b"ngram" + blank + b"2=4"))
    a, b = read_arpa(plain), read_arpa(odd)
    assert a.vocab == b.vocab
    for x, y in zip(a.ngrams, b.ngrams):
        np.testing.assert_array_equal(x.ids, y.ids)
        np.testing.assert_array_equal(x.logprob, y.logprob)
        np.testing.assert_array_equal(x.backoff, y.backoff)
    assert arpa_order(str(odd)) == 3 and synthetic_label(str(odd)) == ""


@pytest.mark.parametrize("inside", [b"\x0b", b"\x0c"])
def test_arpa_vertical_tab_is_inside_a_word(tmp_path, inside):
    """\\x0b and \\x0c are word characters to KenLM's ARPA reader ("Apparently ARPA allows vertical tab inside a
    word"): kept inside the word, as the line rule keeps no control byte but here is not applied."""
    from smtbench.lm.arpa import read_arpa
    odd = tmp_path / "odd.arpa"
    odd.write_bytes(re.sub(rb"(?<=[\t ])b(?=[\t \n])", b"b" + inside + b"x", TOY_ARPA.encode()))
    assert "b" + inside.decode() + "x" in read_arpa(odd).vocab


# ---------------------------------------------------------------- damaged compressed inputs
def _damaged(path: Path, lines: list[str]) -> Path:
    data = "".join(x + "\n" for x in lines).encode() * 50
    if path.suffix == ".gz":
        raw = bytearray(gzip.compress(data))
        raw[len(raw) // 2] ^= 0xFF  # corrupt inside the deflate stream
        path.write_bytes(bytes(raw))
    else:
        path.write_bytes(lzma.compress(data)[:-40])  # truncated
    return path


@pytest.mark.parametrize("suffix", [".gz", ".xz"])
def test_damaged_compressed_inputs(tmp_path, capsys, suffix):
    bad = _damaged(tmp_path / f"text{suffix}", HYPS)
    ok = tmp_path / "ok.txt"
    ok.write_text("".join(x + "\n" for x in HYPS * 50))
    runs = {
        "data prepare": ("data", "prepare", "--text", bad, ok, "--f", "fr", "--e", "en", "--no-tokenize",
                         "--split", "tail", "--dev", "2", "--test", "2", "--outdir", tmp_path / "out"),
        "bleu": ("bleu", "-r", ok, "-y", bad, "--tokenize", "none"),
        "bleu ref": ("bleu", "-r", bad, "-y", ok, "--tokenize", "none"),
        "postprocess": ("postprocess", "-i", bad, "-o", tmp_path / "pp.txt"),
        "decode split": ("decode", "split", "-i", bad, "--shards", "2", "--outdir", tmp_path / "shards"),
    }
    for what, args in runs.items():
        rc, _, err = cli(capsys, *args)
        refused(rc, err, str(bad), "corrupt or truncated")
        assert "Traceback" not in err, what
    ex = _damaged(tmp_path / f"extract{suffix}", EXTRACT)  # the scorer reads it through gzip/xz -dc
    for lex, lines in (("lex.f2e", LEX_F2E), ("lex.e2f", LEX_E2F)):
        (tmp_path / lex).write_text("".join(x + "\n" for x in lines))
    rc, _, err = cli(capsys, "tm", "score", "--extract", ex, "--lex-f2e", tmp_path / "lex.f2e", "--lex-e2f",
                     tmp_path / "lex.e2f", "--out", tmp_path / "pt.gz")
    refused(rc, err, str(ex), "corrupt or truncated")
    pt = _damaged(tmp_path / f"pt{suffix}", ["s0 ||| a ||| 0.5 0.5 0.5 0.5"])
    rc, _, err = cli(capsys, "tm", "binarize", "--phrase-table", pt, "--out", tmp_path / "pt.bin")
    refused(rc, err, str(pt), "corrupt or truncated")
    from smtbench.ioutil import CompressedInputError
    from smtbench.tune.bleu import Reference
    from smtbench.tune.pool import NbestPool
    nb = _damaged(tmp_path / f"run1.nbest{suffix}", ["0 ||| a ||| F0= 1 ||| 1"])  # a resumed tune's n-best
    with pytest.raises(CompressedInputError, match=re.escape(str(nb))):
        NbestPool([Reference(["a"])], [("F0", 1)]).add_nbest(nb)


def test_non_utf8_names_file_and_line(tmp_path, capsys):
    bad, ok = tmp_path / "bad.txt", tmp_path / "ok.txt"
    bad.write_bytes("".join(x + "\n" for x in HYPS).encode().replace(b"birds", b"bi\xe9rds"))
    ok.write_text("".join(x + "\n" for x in HYPS))
    for args in (("data", "prepare", "--text", ok, bad, "--f", "fr", "--e", "en", "--no-tokenize", "--split", "tail",
                  "--dev", "2", "--test", "2", "--outdir", tmp_path / "out"),
                 ("bleu", "-r", ok, "-y", bad), ("bleu", "-r", bad, "-y", ok),
                 ("postprocess", "-i", bad, "-o", tmp_path / "pp.txt"),
                 ("decode", "split", "-i", bad, "--shards", "2", "--outdir", tmp_path / "shards")):
        rc, _, err = cli(capsys, *args)
        refused(rc, err, f"{bad}:3: invalid UTF-8 (byte 0xe9 at column 3)")


# ---------------------------------------------------------------- no splitlines() on user text
#: the splitlines() left in pylib, each on text that is not a user's line-parallel text
ALLOWED = {
    ("tune/moses.py", "for line in out.read_text().splitlines():"),  # kbmira's weights file (program output)
    ("report/history.py", "return [tuple(line.split(\" \", 1)) for line in reversed(out.splitlines()) if line.strip()]"
                          "  # type: ignore[misc]"),  # git log
    ("report/history.py", "for line in _git(root, \"ls-tree\", \"-r\", sha, f\"{RAW}/{experiment}/\").splitlines():"),
    ("report/history.py", "_BLOBS[b] = [json.loads(x) for x in _git(root, \"cat-file\", \"-p\", b).splitlines() "
                          "if x.strip()]"),  # our rows, from git
    ("report/history.py", "for line in _git(root, \"ls-tree\", \"-r\", sha, \"--\", prefix).splitlines():"),  # git
    ("report/gallery.py", "lines = md.read_text(encoding=\"utf-8\").splitlines()"),  # our tables
    ("report/index.py", "title = text.splitlines()[0].lstrip(\"# \").strip()"),  # our tables
    ("report/index.py", "for line in f.read_text().splitlines():"),  # our rows
    ("lm/estimate.py", "head += [f\"# {line}\" for line in header_comment.splitlines()] + [\"\"]"),  # our comment
    ("lm/cuda.py", "info = {\"nvcc\": nvcc, \"nvcc_version\": version.splitlines()[-1] if version else \"unknown\","),
    ("machine.py", "for line in text.splitlines():"),  # /proc
    ("machine.py", "name, mem, driver = [x.strip() for x in out.stdout.splitlines()[0].split(\",\")]"),  # nvidia-smi
    ("machine.py", "for line in (_read(\"/proc/meminfo\") or \"\").splitlines():"),
    ("machine.py", "for line in (_read(\"/proc/self/smaps_rollup\") or \"\").splitlines():"),
    ("experiments/moses2_scaling.py", "rep = json.loads(err.strip().splitlines()[-1])"),  # our child's stderr
    ("experiments/moses2_moses1.py", "return wall, [x.decode(\"utf-8\", errors=\"replace\").strip() for x in "
                                     "out.splitlines()]"),  # Moses' output, bytes (split at \n, \r only)
    ("counts.py", "tail = \" | \".join([line for line in r.stderr.splitlines() if not line.startswith(\"==\")][-5:])"),
    ("counts.py", "tail = \" | \".join([line for line in stderr.splitlines() if not line.startswith(\"==\")][-5:])"),
    # valgrind's stderr
    ("_build.py", "return out.stdout.splitlines()[0]"),  # the compiler's version
}


def test_no_splitlines_on_user_text():
    pkg = ROOT / "pylib" / "smtbench"
    found = set()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        for line in path.read_text(encoding="utf-8").split("\n"):
            if "splitlines(" in line:
                found.add((rel, line.strip()))
    assert found - ALLOWED == set(), "splitlines() on user text: read it with ioutil.open_text / read_lines"
    assert ALLOWED - found == set(), "a use in the allowlist is gone: remove it from ALLOWED"


# ---------------------------------------------------------------- the word rule
#: inside a word: str.split() would split at each, the word rule (ioutil.words, the decoder, Moses) does not
NBSP_WORD, LS_WORD = "x\u00a0y", "b\u2028c"


def test_words_rule():
    from smtbench.ioutil import join_words, words
    assert words(" \tp\u00a0q  r\u2028s\u3000t\u0085u \t\n") == ["p\u00a0q", "r\u2028s\u3000t\u0085u"]
    assert words("") == words(" \t ") == [] and join_words("a \t b\u00a0c ") == "a b\u00a0c"


def test_prepare_extract_decode_keep_words_whole(tmp_path, capsys):
    """A corpus with NBSP and U+2028 inside words: data prepare and tm train's corpus step keep them inside the
    word; the C and Python extracts agree and see it as one token; a phrase table holding it and the decoder
    translate it as one word, and an unknown such word passes through whole."""
    from smtbench.ioutil import words
    from smtbench.tm.extract import extract_files
    f = [f"s0 {NBSP_WORD} s{i}" for i in range(20)]
    e = [f"a  {LS_WORD}\tt{i}" for i in range(20)]
    fp, ep = tmp_path / "c.fr", tmp_path / "c.en"
    fp.write_text("\n".join(f) + "\n", encoding="utf-8")
    ep.write_text("\n".join(e) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    rc, _, err = cli(capsys, "data", "prepare", "--text", fp, ep, "--f", "fr", "--e", "en", "--no-tokenize",
                     "--casing", "keep", "--split", "tail", "--dev", "2", "--test", "2", "--outdir", out)
    assert rc == 0, err
    tr_f = (out / "train.fr").read_text(encoding="utf-8").split("\n")[:-1]
    tr_e = (out / "train.en").read_text(encoding="utf-8").split("\n")[:-1]
    assert tr_f[0] == f"s0 {NBSP_WORD} s0" and tr_e[0] == f"a {LS_WORD} t0"  # runs of space/TAB become one space
    model = tmp_path / "model"
    rc, _, err = cli(capsys, "tm", "train", "--corpus", out / "train", "--f", "fr", "--e", "en", "--outdir", model,
                     "--step", "corpus")
    assert rc == 0, err
    assert (model / "corpus.clean.fr").read_text(encoding="utf-8").split("\n")[0] == tr_f[0]
    al = tmp_path / "al"
    al.write_text("0-0 1-1 2-2\n" * len(tr_f))
    got = []
    for plain in (False, True):
        ext = tmp_path / f"ext{int(plain)}"
        extract_files(str(out / "train.fr"), str(out / "train.en"), str(al), str(ext), str(tmp_path / "inv"), 7,
                      plain=plain)
        got.append(ext.read_bytes())
    assert got[0] == got[1]
    lines = got[0].decode("utf-8").split("\n")
    assert f"{NBSP_WORD} ||| {LS_WORD} ||| 0-0" in lines and f"s0 {NBSP_WORD} ||| a {LS_WORD} ||| 0-0 1-1" in lines
    toy = tmp_path / "toy"
    toy.mkdir()
    ini = toy_phrase_model(toy)
    with open(toy / "pt.txt", "a", encoding="utf-8") as fh:
        fh.write(f"{NBSP_WORD} ||| {LS_WORD} ||| 0.9 0.9 0.9 0.9 ||| 0-0 ||| 1 1 1\n")
    inp, hyp = tmp_path / "in.txt", tmp_path / "out.txt"
    inp.write_text(f"{NBSP_WORD}\np\u00a0q\u3000r\n", encoding="utf-8")
    rc, _, err = cli(capsys, "decode", "cube", "-f", ini, "-i", inp, "-o", hyp, "--no-progress")
    assert rc == 0, err
    h = hyp.read_text(encoding="utf-8").split("\n")
    assert words(h[0]) == [LS_WORD] and words(h[1]) == ["p\u00a0q\u3000r"]


#: str.split() left in pylib, each on purpose: numbers or names in program output (/proc, git, valgrind/perf,
#: mert), moses.ini options and weights, score columns of our own tables; never words of user text (ioutil.words)
SPLIT_ALLOWED = {
    ("resources.py", "return int(line.split()[1]) * 1024"),
    ("tune/moses.py", "head = line.split()"),
    ("tune/moses.py", "vals = [np.array(next(lines).split(), dtype=np.float64) for _ in range(rows)]"),
    ("tune/moses.py", "return MosesResult(np.array(m.group(1).split(), dtype=np.float64), float(m.group(2)), log)"),
    ("report/history.py", "out.append(meta.split()[2])"),
    ("report/history.py", "blob = meta.split()[2]"),
    ("report/history.py", 'full, date = _git(root, "show", "-s", "--format=%H %cI", f"{sha}^{{commit}}").split()'),
    ("ioutil.py", 'of a word (never ``str.split()``, which also splits at those)."""'),
    ("ioutil.py", "return int(line.split()[1], 8)"),
    ("counts.py", "events = line.split()[1:]"),
    ("counts.py", "totals = [int(x) for x in line.split()[1:]]"),
    ("counts.py", "parts = line.split()"),
    ("decode/cli.py", "return int(line.split()[1])"),
    ("decode/ini.py", "ws = [float(v) for v in values.split()]"),
    ("decode/ini.py", "for tok in text.split():"),
    ("decode/ini.py", 'if line.split() != ["0", "T", "0"]:'),
    ("decode/derivation.py", "vals = [_ln(float(x)) for x in parts[2].split()]"),
    ("machine.py", "mem_kb = int(line.split()[1])"),
    ("machine.py", "return round(int(line.split()[1]) / 1024, 1)"),
    ("experiments/mediani_scoring.py", "rss = int(tf.read().split()[-1]) * 1024"),
    ("experiments/moses2_moses1.py", "head = line.split()[0]"),
    ("experiments/moses2_moses1.py", "parts = line.split()"),
    ("tm/model.py", "va = [float(x) for x in fa[0].split()][:columns]"),
    ("tm/model.py", "vb = [float(x) for x in fb[0].split()][:columns]"),
    ("tm/model.py", "ca, cb = [float(x) for x in fa[2].split()], [float(x) for x in fb[2].split()]"),
    ("tm/score.py", "sc = [float(x) for x in f[2].split()]"),
    ("tm/score.py", "cn = [float(x) for x in f[4].split()]"),
}


def test_no_str_split_on_user_text():
    pkg = ROOT / "pylib" / "smtbench"
    found = set()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        for line in path.read_text(encoding="utf-8").split("\n"):
            if ".split()" in line:
                found.add((rel, line.strip()))
    assert found - SPLIT_ALLOWED == set(), "str.split() on user text: split words with ioutil.words"
    assert SPLIT_ALLOWED - found == set(), "a use in the allowlist is gone: remove it from SPLIT_ALLOWED"


def test_words_of_bytes_split_as_words_of_text():
    """A decoder's checked input sentence is bytes: ioutil.words splits it by the same rule (the count point and the
    experiments' source-word counts take it; a str-only words() failed under valgrind in the smoke grid)."""
    from smtbench.ioutil import words
    line = "a\u00a0b\tc  d\u2028e"
    assert [w.decode("utf-8") for w in words(line.encode("utf-8"))] == words(line) == ["a\u00a0b", "c", "d\u2028e"]
