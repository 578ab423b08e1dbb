"""A small Moses model that the tests train themselves with our own pipeline (no ../shared needed): a slice of the
shipped corpus (the first TRAIN verses of the train books, the first DEV verses of the dev books of at most DEV_MAX_WORDS words), tokenized and
lowercased as `data prepare` does, aligned by eflomal (`tm align`), extracted (max length 7, wbe-msd orientations),
scored, reordering-scored, with our 3-gram LM, and `tm model`'s moses.ini. Built once per test session (about a
minute on 2 cores); a decoder test that needs the real Moses programs compares with them on this model."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "resources" / "bible-es-en" / "es-en.tsv.xz"
TRAIN, DEV = 3000, 40
DEV_MAX_WORDS = 20  # short held-out verses keep the decoder tests fast


def _smtbench(*args: str) -> None:
    cmd = [sys.executable, "-m", "smtbench.cli", *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"smtbench {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")


def build(outdir: Path) -> Path:
    """Train the model into ``outdir``; returns its moses.ini (``outdir/model/moses.ini``). ``outdir/dev.es``,
    ``outdir/dev.en`` hold the DEV held-out verses."""
    from smtbench.data import Tokenizer, read_tsv, split_of

    outdir.mkdir(parents=True, exist_ok=True)
    ini = outdir / "model" / "moses.ini"
    if ini.exists():
        return ini
    verses = read_tsv(CORPUS)
    train = [v for v in verses if split_of(v.ref) == "train"][:TRAIN]
    tok = {lang: Tokenizer(lang) for lang in ("es", "en")}
    dev = [v for v in verses if split_of(v.ref) == "dev" and len(tok["es"](v.es).split()) <= DEV_MAX_WORDS][:DEV]
    for name, part in (("train", train), ("dev", dev)):
        for lang in ("es", "en"):
            lines = [" ".join(tok[lang](getattr(v, lang)).split()) for v in part]
            (outdir / f"{name}.{lang}").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    d = str(outdir)
    _smtbench("tm", "align", "--src", f"{d}/train.es", "--tgt", f"{d}/train.en", "--out", f"{d}/aligned")
    _smtbench("tm", "extract", "--src", f"{d}/train.es", "--tgt", f"{d}/train.en", "--align", f"{d}/aligned",
              "--outdir", f"{d}/tm", "--max-length", "7", "--orientation")
    _smtbench("tm", "score", "--extract", f"{d}/tm/extract.gz", "--lex-f2e", f"{d}/tm/lex.f2e", "--lex-e2f",
              f"{d}/tm/lex.e2f", "--out", f"{d}/tm/phrase-table.gz", "--threads", "1", "--memory", "64M")
    _smtbench("tm", "reorder", "--orientations", f"{d}/tm/extract.o.gz", "--out",
              f"{d}/tm/reordering-table.wbe-msd-bidirectional-fe.gz")
    _smtbench("lm", "estimate", "--order", "3", "--text", f"{d}/train.en", "--arpa", f"{d}/lm.o3.arpa.gz", "-q")
    _smtbench("tm", "model", "--phrase-table", f"{d}/tm/phrase-table.gz", "--reordering-table",
              f"{d}/tm/reordering-table.wbe-msd-bidirectional-fe.gz", "--lm", f"{d}/lm.o3.arpa.gz", "--order", "3",
              "--outdir", f"{d}/model")
    if not ini.exists():
        raise RuntimeError(f"{ini}: tm model wrote no moses.ini")
    return ini


if __name__ == "__main__":  # python tests/small_model.py DIR
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "small-model"))))
