"""The shipped bible-es-en corpus: whole-book splits, Moses-style tokenization and lowercasing.

Tokenization is sacremoses' MosesTokenizer (Moses' tokenizer.perl conventions) with ``escape=False``
(``&``, ``<``, ``>``, ``'``, ``"``, ``[``, ``]`` stay literal instead of becoming XML entities) and
``aggressive_dash_splits=False`` (Moses' default), followed by lowercasing (``str.lower``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .ioutil import atomic_open, open_text

# The split the corpus README suggests: whole books held out.
DEV_BOOKS = ("Ruth", "Esth", "Eccl", "Joel", "Eph", "Phil", "Col", "1Thess", "2Thess")
TEST_BOOKS = ("Ezra", "Dan", "Amos", "Mark", "Gal", "Heb", "1Pet")
SPLITS = ("train", "dev", "test")
LANGS = ("es", "en")


class CorpusFormatError(ValueError):
    """A malformed corpus line (message: path:lineno: what is wrong)."""


@dataclass
class Verse:
    ref: str
    es: str
    en: str


def split_of(ref: str) -> str:
    book = ref.split(".", 1)[0]
    if book in DEV_BOOKS:
        return "dev"
    if book in TEST_BOOKS:
        return "test"
    return "train"


def read_tsv(path: str | os.PathLike[str]) -> list[Verse]:
    out: list[Verse] = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            parts = line.split("\t")
            if len(parts) != 3:
                raise CorpusFormatError(f"{path}:{lineno}: expected ref<TAB>es<TAB>en, got {len(parts)} fields")
            ref, es, en = parts
            if ref.count(".") != 2 or not es.strip() or not en.strip():
                raise CorpusFormatError(f"{path}:{lineno}: bad verse reference or empty side: {line[:60]!r}")
            out.append(Verse(ref, es.strip(), en.strip()))
    return out


class Tokenizer:
    """sacremoses tokenizer (+ lowercasing unless ``lower`` is false), Moses conventions, escape=False. ``lang``
    picks the non-breaking prefixes of a language sacremoses knows; any other code gets the generic rules."""

    def __init__(self, lang: str, lower: bool = True):
        from sacremoses import MosesTokenizer
        self._tok = MosesTokenizer(lang=lang)
        self._lower = lower

    def __call__(self, text: str) -> str:
        out = self._tok.tokenize(text, escape=False, return_str=True, aggressive_dash_splits=False)
        return out.lower() if self._lower else out


def truecase_train(lines: list[str], model: str, progress: bool = False) -> list[str]:
    """Train sacremoses' truecaser (Moses' train-truecaser.perl) on tokenized ``lines``, save its model to
    ``model`` (atomically) and return the truecased lines."""
    from sacremoses import MosesTruecaser

    from .ioutil import atomic_path
    tc = MosesTruecaser()
    tc.train([s.split() for s in lines], save_to=None, progress_bar=False)
    with atomic_path(model) as tmp:
        tc.save_model(tmp)
    return [tc.truecase(s, return_str=True) for s in lines]


def truecase_apply(lines: Iterable[str], model: str) -> list[str]:
    """Truecase tokenized lines with a model ``truecase_train`` saved."""
    from sacremoses import MosesTruecaser
    tc = MosesTruecaser(load_from=model)
    return [tc.truecase(s, return_str=True) for s in lines]


def tokenize_lines(lines: Iterable[str], lang: str) -> list[str]:
    tok = Tokenizer(lang)
    return [" ".join(tok(s).split()) for s in lines]


def prepare(tsv: str | os.PathLike[str], outdir: str | os.PathLike[str], progress: bool = False) -> dict[str, int]:
    """Write {train,dev,test}.{es,en} (tokenized, lowercased), {dev,test}.raw.{es,en} (untokenized
    references for sacrebleu) and {split}.ref (verse references). Returns verses per split."""
    verses = read_tsv(tsv)
    out = Path(outdir)
    by_split: dict[str, list[Verse]] = {s: [] for s in SPLITS}
    for v in verses:
        by_split[split_of(v.ref)].append(v)
    counts = {}
    for split in SPLITS:
        vs = by_split[split]
        counts[split] = len(vs)
        for lang in LANGS:
            raw = [getattr(v, lang) for v in vs]
            if progress:
                import sys
                print(f"tokenizing {split}.{lang} ({len(raw)} verses)", file=sys.stderr)
            toks = tokenize_lines(raw, lang)
            for i, t in enumerate(toks):
                if not t:
                    raise CorpusFormatError(f"{tsv}: verse {vs[i].ref} tokenizes to nothing ({lang})")
            _write_lines(out / f"{split}.{lang}", toks)
            if split != "train":
                _write_lines(out / f"{split}.raw.{lang}", raw)
        _write_lines(out / f"{split}.ref", [v.ref for v in vs])
    return counts


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line + "\n")
