"""`smtbench lm estimate` against the real lmplz (built by `bash tools/build_lmplz.sh`) and the kenlm module.

Live checks only: the reference values come from lmplz run here, scored with the `kenlm` module. The worked
example of /work/shared/notes/lmplz-modified-kneser-ney.md is checked value by value as well.
"""
from __future__ import annotations

import gzip
import math
import os
import subprocess
from pathlib import Path

import pytest

from smtbench.cli import main as cli_main
from smtbench.lm.estimate import EstimateError, estimate

ROOT = Path(__file__).resolve().parent.parent
LMPLZ = Path(os.environ.get("SMTBENCH_LMPLZ", ROOT / "build/lmplz/bin/lmplz"))
needs_lmplz = pytest.mark.skipif(
    not LMPLZ.is_file(), reason=f"lmplz not built ({LMPLZ} missing): run `bash tools/build_lmplz.sh`")

TOY = """the cat sat on the mat
the dog sat on the log
a cat saw the dog
the dog saw a cat
the cat ran
a dog ran on the mat
the cat sat
a bird sat on the log
the bird saw the cat
a dog sat
"""


def read_arpa_dict(path: Path) -> dict[tuple[str, ...], tuple[float, float]]:
    """n-gram -> (log10 p, log10 backoff) straight from the text (independent of smtbench's reader)."""
    out: dict[tuple[str, ...], tuple[float, float]] = {}
    order = 0
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("\\") and line.endswith("-grams:"):
                order = int(line[1:line.index("-")])
                continue
            if not order or not line or line.startswith("\\"):
                continue
            f = line.split("\t")
            key = tuple(f[1].split())
            assert len(key) == order, line
            assert key not in out, f"duplicate {key}"
            out[key] = (float(f[0]), float(f[2]) if len(f) > 2 else 0.0)
    return out


def run_lmplz(order: int, text: Path, arpa: Path, *extra: str) -> None:
    subprocess.run([str(LMPLZ), "-o", str(order), "-S", "1G", "-T", str(arpa.parent), "--text", str(text),
                    "--arpa", str(arpa), *extra], check=True, capture_output=True)


def assert_same_model(ours: Path, ref: Path, tol: float = 1e-4) -> None:
    a, b = read_arpa_dict(ours), read_arpa_dict(ref)
    assert a.keys() == b.keys(), (f"n-gram sets differ: only ours {sorted(a.keys() - b.keys())[:5]}, "
                                  f"only lmplz {sorted(b.keys() - a.keys())[:5]}")
    worst = max(((abs(a[k][0] - b[k][0]), abs(a[k][1] - b[k][1]), k) for k in a), key=lambda t: max(t[:2]))
    assert max(worst[:2]) <= tol, f"largest difference {worst}: ours {a[worst[2]]}, lmplz {b[worst[2]]}"


def heldout_ppl(arpa: Path, heldout: Path) -> float:
    import kenlm
    model = kenlm.Model(str(arpa))
    total, tokens = 0.0, 0
    with open(heldout, encoding="utf-8") as fh:
        for line in fh:
            total += model.score(line.strip(), bos=True, eos=True)
            tokens += len(line.split()) + 1
    return 10.0 ** (-total / tokens)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    """work/data/{train,test}.en (the data rule's output), or the same command run into a temp dir."""
    data = ROOT / "work/data"
    if not ((data / "train.en").is_file() and (data / "test.en").is_file()):
        from smtbench.data import prepare
        data = tmp_path_factory.mktemp("data")
        prepare(str(ROOT / "resources/bible-es-en/es-en.tsv.xz"), str(data))
    return {"train": data / "train.en", "test": data / "test.en"}


@pytest.fixture()
def toy(tmp_path) -> Path:
    p = tmp_path / "toy.txt"
    p.write_text(TOY)
    return p


def test_worked_example_from_the_notes(toy, tmp_path):
    stats = estimate(toy, 3, tmp_path / "toy.arpa")
    assert stats.counts == [14, 29, 37]
    d = stats.discounts
    assert d[0] == pytest.approx([1 / 7, 2 - 3 * (1 / 7) * 3 / 6, 3.0], abs=1e-6)
    y2 = 18 / 34
    assert d[1] == pytest.approx([1 - 2 * y2 * 8 / 18, 2 - 3 * y2 * 1 / 8, 3 - 4 * y2 * 1 / 1], abs=1e-6)
    m = read_arpa_dict(tmp_path / "toy.arpa")
    gamma0, V = 23 / 29, 13
    assert m[("cat",)][0] == pytest.approx(math.log10((2 - d[0][1]) / 29 + gamma0 / V), abs=1e-6)
    assert m[("<unk>",)][0] == pytest.approx(math.log10(gamma0 / V), abs=1e-6)
    assert m[("<s>",)][0] == 0.0
    gamma_the = (3 * d[1][0] + 2 * d[1][1]) / 7
    assert m[("the",)][1] == pytest.approx(math.log10(gamma_the), abs=1e-6)
    p_cat = (2 - d[0][1]) / 29 + gamma0 / V
    assert m[("the", "cat")][0] == pytest.approx(math.log10((2 - d[1][1]) / 7 + gamma_the * p_cat), abs=1e-6)
    assert m[("</s>",)][1] == 0.0 and m[("<unk>",)][1] == 0.0


@needs_lmplz
@pytest.mark.parametrize("variant", ["toy", "repeated", "empty_lines"])
def test_ngram_by_ngram_small_texts(variant, toy, tmp_path):
    """Every n-gram's prob and back-off equal lmplz's. 'repeated' (8 copies) needs discount fallback in lmplz
    too and exercises lmplz's counts-of-counts quirk; 'empty_lines' adds blank and ragged lines."""
    text = tmp_path / f"{variant}.txt"
    body = TOY if variant == "toy" else TOY * 8
    if variant == "empty_lines":
        body = "a b c\n\na b\n  b  c a \nc c\n\n" + body
    text.write_text(body)
    fallback = [] if variant != "toy" else None
    estimate(text, 3, tmp_path / "ours.arpa", discount_fallback=fallback)
    run_lmplz(3, text, tmp_path / "lmplz.arpa", *(["--discount_fallback"] if fallback is not None else []))
    assert_same_model(tmp_path / "ours.arpa", tmp_path / "lmplz.arpa", tol=1e-6 * 5)


@needs_lmplz
@pytest.mark.parametrize("order", [2, 4, 6])
def test_ngram_by_ngram_corpus_head(order, corpus, tmp_path):
    """The first 3000 training sentences, orders 2, 4 and 6: every value agrees with lmplz to 1e-4."""
    text = tmp_path / "head.txt"
    with open(corpus["train"], encoding="utf-8") as fh:
        text.write_text("".join(line for _, line in zip(range(3000), fh)))
    estimate(text, order, tmp_path / "ours.arpa.gz")
    run_lmplz(order, text, tmp_path / "lmplz.arpa")
    assert_same_model(tmp_path / "ours.arpa.gz", tmp_path / "lmplz.arpa", tol=1e-4)


@needs_lmplz
@pytest.mark.parametrize("order", [3, 5])
def test_heldout_perplexity_matches_lmplz(order, corpus, tmp_path):
    """Whole training text, held-out test text: perplexities (kenlm module) within 1%, and in fact every
    n-gram agrees to 1e-4."""
    ours, ref = tmp_path / "ours.arpa", tmp_path / "lmplz.arpa"
    estimate(corpus["train"], order, ours)
    run_lmplz(order, corpus["train"], ref)
    p_ours, p_ref = heldout_ppl(ours, corpus["test"]), heldout_ppl(ref, corpus["test"])
    assert abs(p_ours / p_ref - 1.0) < 0.01, (p_ours, p_ref)
    assert_same_model(ours, ref, tol=1e-4)


def test_chunked_counting_equals_one_chunk(corpus, tmp_path):
    """A tiny memory budget (many counting chunks, merged) gives the identical ARPA."""
    text = tmp_path / "head.txt"
    with open(corpus["train"], encoding="utf-8") as fh:
        text.write_text("".join(line for _, line in zip(range(4000), fh)))
    from smtbench.lm import estimate as est_mod
    estimate(text, 4, tmp_path / "one.arpa")
    orig = est_mod.chunk_tokens_for
    try:
        est_mod.chunk_tokens_for = lambda order, memory: 5000
        estimate(text, 4, tmp_path / "many.arpa")
    finally:
        est_mod.chunk_tokens_for = orig
    assert (tmp_path / "one.arpa").read_bytes() == (tmp_path / "many.arpa").read_bytes()


def test_kenlm_loads_our_arpa(toy, tmp_path):
    import kenlm  # (the wheel's kenlm reads plain ARPA only: no gzip support compiled in)
    estimate(toy, 3, tmp_path / "toy.arpa.gz")
    with gzip.open(tmp_path / "toy.arpa.gz", "rb") as fh:
        (tmp_path / "toy.arpa").write_bytes(fh.read())
    m = kenlm.Model(str(tmp_path / "toy.arpa"))
    assert m.order == 3
    assert m.score("the cat sat", bos=True, eos=True) < 0


@pytest.mark.parametrize("body,needle", [
    ("", "empty"), ("\n\n  \n", "empty"), ("a b\nc <s> d\n", ":2: special word <s>"),
    ("a </s>\n", ":1: special word </s>"), ("x\n<unk>\n", ":2: special word <unk>"),
])
def test_bad_text_is_rejected_without_output(body, needle, tmp_path):
    text, out = tmp_path / "t.txt", tmp_path / "out" / "m.arpa"
    text.write_text(body)
    with pytest.raises(EstimateError, match=needle):
        estimate(text, 3, out)
    assert not out.parent.exists() or not any(out.parent.iterdir())


@pytest.mark.parametrize("order", [0, 1, 7, 100])
def test_absurd_order(order, toy, tmp_path):
    with pytest.raises(EstimateError, match="order"):
        estimate(toy, order, tmp_path / "m.arpa")
    assert not (tmp_path / "m.arpa").exists()


def test_bad_discounts_need_fallback(toy, tmp_path):
    text = tmp_path / "rep.txt"
    text.write_text(TOY * 8)
    with pytest.raises(EstimateError, match="discount"):
        estimate(text, 3, tmp_path / "m.arpa")
    assert not (tmp_path / "m.arpa").exists()
    stats = estimate(text, 3, tmp_path / "m.arpa", discount_fallback=[])
    assert stats.discount_fallback_orders == [3] and stats.discounts[2] == [0.5, 1.0, 1.5]


def test_cli_errors_exit_2_and_leave_nothing(toy, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli_main(["lm", "estimate", "-q", "-o", "3", "--text", str(toy), "--arpa", str(blocker / "m.arpa")]) == 2
    assert cli_main(["lm", "estimate", "-q", "-o", "9", "--text", str(toy), "--arpa", str(tmp_path / "m.arpa")]) == 2
    assert cli_main(["lm", "estimate", "-q", "-o", "3", "--text", str(tmp_path / "nope.txt"),
                     "--arpa", str(tmp_path / "m.arpa")]) == 2
    assert "nope.txt" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "toy.txt"]


def test_cli_writes_arpa_and_sidecar(toy, tmp_path, capsys):
    import json
    out = tmp_path / "m.arpa.gz"
    assert cli_main(["lm", "estimate", "-q", "-o", "3", "--text", str(toy), "--arpa", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["counts"] == [14, 29, 37] and info["synthetic"] is False
    assert json.loads((tmp_path / "m.arpa.gz.json").read_text())["counts"] == [14, 29, 37]
    assert read_arpa_dict(out)[("the", "cat")][0] == pytest.approx(-1.1019091, abs=1e-6)
