"""Corpus preparation: whole-book splits, tokenization conventions, malformed input → file:line."""
from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from smtbench import data

ROOT = Path(__file__).resolve().parent.parent
TSV = ROOT / "resources" / "bible-es-en" / "es-en.tsv.xz"


def test_split_by_whole_books():
    assert data.split_of("Ruth.1.1") == "dev"
    assert data.split_of("Mark.3.4") == "test"
    assert data.split_of("1Pet.1.1") == "test"
    assert data.split_of("Gen.1.1") == "train"
    assert not set(data.DEV_BOOKS) & set(data.TEST_BOOKS)


def test_tokenizer_moses_conventions():
    tok = data.Tokenizer("en")
    assert tok("In the beginning, God created the heavens & the earth.") == \
        "in the beginning , god created the heavens & the earth ."
    assert data.Tokenizer("es")("¿Dónde está?") == "¿ dónde está ?"


def test_prepare_small(tmp_path):
    lines = ["Gen.1.1\tEN el principio.\tIn the beginning.",
             "Ruth.1.1\tY aconteció.\tIt happened.",
             "Mark.1.1\tPrincipio del evangelio.\tThe beginning of the Good News."]
    tsv = tmp_path / "c.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = data.prepare(tsv, tmp_path / "out")
    assert counts == {"train": 1, "dev": 1, "test": 1}
    assert (tmp_path / "out" / "train.es").read_text() == "en el principio .\n"
    assert (tmp_path / "out" / "test.raw.en").read_text() == "The beginning of the Good News.\n"
    assert (tmp_path / "out" / "dev.ref").read_text() == "Ruth.1.1\n"


def test_malformed_line_names_file_and_line(tmp_path):
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("Gen.1.1\ta\tb\nGen.1.2\tonly two\n", encoding="utf-8")
    with pytest.raises(data.CorpusFormatError, match=r"bad\.tsv:2:"):
        data.prepare(tsv, tmp_path / "out")
    assert not (tmp_path / "out" / "train.es").exists()


def test_shipped_corpus_split_sizes():
    verses = data.read_tsv(TSV)
    counts = {s: 0 for s in data.SPLITS}
    for v in verses:
        counts[data.split_of(v.ref)] += 1
    # the corpus README's numbers
    assert counts == {"train": 27812, "dev": 1037, "test": 2018}
