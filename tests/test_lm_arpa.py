"""ARPA reading/writing: structure, ids, <unk> handling, compression, and file:line errors."""
from __future__ import annotations

import gzip
import lzma

import numpy as np
import pytest

from smtbench.lm.arpa import ArpaFormatError, read_arpa, write_arpa

from toy_models import TOY_ARPA as TOY  # noqa: E402


def _write(tmp_path, text, name="m.arpa"):
    p = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(p, "wt") as fh:
            fh.write(text)
    elif name.endswith(".xz"):
        with lzma.open(p, "wt") as fh:
            fh.write(text)
    else:
        p.write_text(text)
    return p


@pytest.mark.parametrize("name", ["m.arpa", "m.arpa.gz", "m.arpa.xz"])
def test_read_toy(tmp_path, name):
    m = read_arpa(_write(tmp_path, TOY, name))
    assert m.order == 3
    assert m.vocab == ["<unk>", "<s>", "</s>", "a", "b"]
    assert m.word_id == {w: i for i, w in enumerate(m.vocab)}
    assert m.counts == [5, 4, 2]
    bi = m.ngrams[1]
    assert bi.ids.dtype == np.uint32 and bi.ids.shape == (4, 2)
    assert bi.ids.tolist() == [[1, 3], [3, 4], [4, 2], [4, 3]]
    assert bi.logprob.dtype == np.float32
    np.testing.assert_array_equal(bi.logprob, np.float32([-0.3, -0.4, -0.5, -0.6]))
    np.testing.assert_array_equal(bi.backoff, np.float32([-0.1, -0.15, 0, 0]))
    np.testing.assert_array_equal(m.ngrams[0].backoff, np.float32([0, -0.5, 0, -0.3, -0.2]))
    assert not m.ngrams[2].backoff.any()


def test_unk_added_when_missing(tmp_path):
    text = TOY.replace("ngram 1=5", "ngram 1=4").replace("-1.0\t<unk>\t0\n", "")
    m = read_arpa(_write(tmp_path, text))
    assert m.vocab[-1] == "<unk>" and len(m.vocab) == 5
    assert m.ngrams[0].logprob[-1] == np.float32(-100)
    assert m.ngrams[0].ids[-1, 0] == 4


def test_upper_unk_and_spaces(tmp_path):
    text = TOY.replace("<unk>", "<UNK>").replace("-0.3\t<s> a\t-0.1", "-0.3 <s>\ta -0.1\r")
    m = read_arpa(_write(tmp_path, "# comment\n\n" + text + "\n\n"))
    assert m.vocab[0] == "<unk>"
    assert m.ngrams[1].backoff[0] == np.float32(-0.1)


@pytest.mark.parametrize("name", ["w.arpa", "w.arpa.gz"])
def test_write_roundtrip(tmp_path, name):
    m = read_arpa(_write(tmp_path, TOY))
    write_arpa(m, tmp_path / name)
    m2 = read_arpa(tmp_path / name)
    assert m2.vocab == m.vocab
    for a, b in zip(m.ngrams, m2.ngrams):
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_array_equal(a.logprob, b.logprob)
        np.testing.assert_array_equal(a.backoff, b.backoff)


def test_write_is_read_by_kenlm(tmp_path):
    kenlm = pytest.importorskip("kenlm")
    m = read_arpa(_write(tmp_path, TOY))
    write_arpa(m, tmp_path / "w.arpa")
    a = kenlm.Model(str(tmp_path / "m.arpa"))
    b = kenlm.Model(str(tmp_path / "w.arpa"))
    for s in ["a b", "b b a", "c a"]:
        assert a.score(s) == pytest.approx(b.score(s), abs=1e-6)


def _lines(text):
    return text.split("\n")


BAD = [
    # (description, transform of TOY, line, message fragment)
    ("no data header", lambda t: t.replace("\\data\\\n", "hello\n"), 1, "\\data\\"),
    ("empty file", lambda t: "", 1, "\\data\\"),
    ("count mismatch", lambda t: t.replace("ngram 2=4", "ngram 2=5"), 19, "says 5 2-grams"),
    ("too many", lambda t: t.replace("ngram 2=4", "ngram 2=3"), 17, "more 2-grams"),
    ("bad prob", lambda t: t.replace("-0.4\ta b", "-0.4x\ta b"), 15, "bad number"),
    ("bad backoff", lambda t: t.replace("a b\t-0.15", "a b\tnan"), 15, "bad number"),
    ("positive prob", lambda t: t.replace("-0.4\ta b", "0.4\ta b"), 15, "positive"),
    ("wrong order short", lambda t: t.replace("-0.2\t<s> a b", "-0.2\t<s> a"), 20, "wrong order"),
    ("wrong order long", lambda t: t.replace("-0.5\tb </s>", "-0.5\tb </s> a b"), 16, "wrong order"),
    ("duplicate", lambda t: t.replace("-0.6\tb a\t0", "-0.6\ta b\t0"), 17, "duplicate 2-gram"),
    ("duplicate unigram", lambda t: t.replace("-0.8\tb\t-0.2", "-0.8\ta\t-0.2"), 11, "duplicate unigram"),
    ("unknown word", lambda t: t.replace("-0.6\tb a", "-0.6\tb zz"), 17, "not a unigram"),
    ("top backoff", lambda t: t.replace("-0.1\ta b </s>", "-0.1\ta b </s>\t-0.2"), 21, "highest order"),
    ("section order", lambda t: t.replace("\\2-grams:", "\\3-grams:"), 13, "expected \\2-grams:"),
    ("missing end", lambda t: t.replace("\\end\\\n", ""), 23, "before \\end\\"),
    ("text after end", lambda t: t + "junk\n", 24, "after \\end\\"),
    ("bad count line", lambda t: t.replace("ngram 2=4", "ngram two=4"), 3, "ngram N=count"),
    ("count gap", lambda t: t.replace("ngram 2=4", "ngram 4=4"), 3, "expected 'ngram 2"),
]


@pytest.mark.parametrize("desc,transform,line,fragment", BAD, ids=[b[0] for b in BAD])
def test_malformed(tmp_path, desc, transform, line, fragment):
    p = _write(tmp_path, transform(TOY))
    with pytest.raises(ArpaFormatError) as ei:
        read_arpa(p)
    msg = str(ei.value)
    assert msg.startswith(f"{p}:{line}: "), msg
    assert fragment in msg, msg
    assert isinstance(ei.value, ValueError)


def test_malformed_gz_names_file(tmp_path):
    p = _write(tmp_path, TOY.replace("-0.4\ta b", "-0.4x\ta b"), "m.arpa.gz")
    with pytest.raises(ArpaFormatError, match=r"m\.arpa\.gz:15: bad number"):
        read_arpa(p)


def test_large_chunks_and_crlf(tmp_path):
    """Many unigrams crossing the reader's chunk boundary; CRLF line ends."""
    words = [f"w{i}" for i in range(50_000)]
    lines = ["\\data\\", f"ngram 1={len(words) + 3}", "ngram 2=1", "", "\\1-grams:",
             "-1\t<unk>\t0", "-99\t<s>\t-0.5", "-1\t</s>"]
    lines += [f"-{1 + i % 7 / 10}\t{w}\t-0.{1 + i % 5}" for i, w in enumerate(words)]
    lines += ["", "\\2-grams:", "-0.5\t<s> w7", "", "\\end\\", ""]
    p = tmp_path / "big.arpa"
    p.write_bytes("\r\n".join(lines).encode())
    m = read_arpa(p)
    assert len(m.vocab) == 50_003 and m.vocab[-1] == "w49999"
    assert m.ngrams[1].ids.tolist() == [[1, 10]]
    assert m.ngrams[0].logprob[3 + 8] == np.float32(-1.1)
