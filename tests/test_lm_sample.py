"""`smtbench lm sample`: seeded, exact back-off sampling. The empirical next-word distributions are compared
with an oracle built from the model file itself (explicit n-grams) and the kenlm module's scores."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from smtbench.cli import main as cli_main
from smtbench.lm.arpa import read_arpa
from smtbench.lm.estimate import estimate
from smtbench.lm.sample import Sampler, sample

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


@pytest.fixture(scope="module")
def toy_model(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("toy")
    (d / "toy.txt").write_text(TOY)
    estimate(d / "toy.txt", 3, d / "toy.arpa")
    return d / "toy.arpa"


def oracle(model, ctx: tuple[str, ...]) -> dict[str, float]:
    """The sampler's next-word distribution after context ctx, from the model's explicit n-grams:
    explicit words get P(ctx w); the rest share 1 - sum(explicit) in proportion to the next shorter context's
    distribution. The unigram level excludes <s> and <unk>."""
    vocab = model.vocab
    if not ctx:
        t = model.ngrams[0]
        p = {vocab[int(i)]: 10.0 ** float(lp) for i, lp in zip(t.ids[:, 0], t.logprob)}
        p = {w: v for w, v in p.items() if w not in ("<s>", "<unk>")}
        z = sum(p.values())
        return {w: v / z for w, v in p.items()}
    n = len(ctx) + 1
    t = model.ngrams[n - 1]
    ids = [model.word_id[w] for w in ctx]
    rows = np.all(t.ids[:, :-1] == np.array(ids, dtype=np.uint32), axis=1)
    explicit = {vocab[int(w)]: 10.0 ** float(lp) for w, lp in zip(t.ids[rows, -1], t.logprob[rows])}
    lower = oracle(model, ctx[1:])
    rest = 1.0 - sum(explicit.values())
    z = sum(v for w, v in lower.items() if w not in explicit)
    out = dict(explicit)
    for w, v in lower.items():
        if w not in explicit:
            out[w] = rest * v / z
    return out


def test_oracle_agrees_with_kenlm_for_explicit_ngrams(toy_model):
    import kenlm
    lm = kenlm.Model(str(toy_model))
    model = read_arpa(toy_model)
    dist = oracle(model, ("<s>", "the"))
    for w in ("cat", "dog", "bird"):
        full = list(lm.full_scores(f"the {w}", bos=True, eos=False))
        assert dist[w] == pytest.approx(10.0 ** full[1][0], rel=1e-5)


@pytest.mark.parametrize("ctx", [("<s>",), ("<s>", "the"), ("the", "dog"), ("on", "the")])
def test_empirical_distribution_matches_oracle(toy_model, ctx):
    model = read_arpa(toy_model)
    s = Sampler(model)
    ids = s.draw_ids(3_000_000, seed=11)
    words = np.array(model.vocab)[ids]
    # the word following each occurrence of the context (sentence starts carry <s>)
    seq = np.concatenate([["</s>"], words])
    starts = np.where(seq[:-1] == "</s>")[0]
    if ctx[0] == "<s>":
        pos = starts + len(ctx) - 1
        ok = np.ones(len(pos), bool)
        for k, w in enumerate(ctx[1:], 1):
            ok &= seq[np.minimum(starts + k, len(seq) - 1)] == w
        pos = pos[ok]
    else:
        a, b = seq[:-2], seq[1:-1]
        pos = np.where((a == ctx[0]) & (b == ctx[1]))[0] + 1
    pos = pos[pos + 1 < len(seq)]
    follow = Counter(seq[pos + 1])
    n = sum(follow.values())
    assert n > 20_000
    dist = oracle(model, ctx[-2:] if len(ctx) > 2 else ctx)
    for w in set(dist) | set(follow):
        p = dist.get(w, 0.0)
        f = follow.get(w, 0) / n
        assert abs(f - p) <= 5 * math.sqrt(max(p * (1 - p), 1e-9) / n) + 1e-4, (ctx, w, f, p)


def test_seeded_and_never_special(toy_model, tmp_path):
    a = sample(toy_model, tmp_path / "a.txt", 5000, seed=3)
    b = sample(toy_model, tmp_path / "b.txt", 5000, seed=3)
    c = sample(toy_model, tmp_path / "c.txt", 5000, seed=4)
    ta, tb, tc = ((tmp_path / f"{x}.txt").read_text() for x in "abc")
    assert ta == tb and ta != tc
    assert a.words == 5000 and sum(len(line.split()) for line in ta.splitlines()) == 5000
    assert ta.endswith("\n") and len(ta.splitlines()) == a.sentences
    assert not {"<s>", "</s>", "<unk>"} & set(ta.split())
    meta = json.loads((tmp_path / "a.txt.json").read_text())
    assert meta["synthetic"] is True and meta["seed"] == 3 and meta["words"] == 5000


def test_synthetic_text_trains_a_labelled_model(toy_model, tmp_path, capsys):
    assert cli_main(["lm", "sample", "-q", "--arpa", str(toy_model), "--words", "20000", "--seed", "1",
                     "--out", str(tmp_path / "synth-x.txt.gz")]) == 0
    capsys.readouterr()
    assert cli_main(["lm", "estimate", "-q", "-o", "3", "--discount-fallback", "--text",
                     str(tmp_path / "synth-x.txt.gz"), "--arpa", str(tmp_path / "synth-x.arpa")]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["synthetic"] is True and info["synthetic_source"] == str(toy_model)
    assert (tmp_path / "synth-x.arpa").read_text().startswith("# SYNTHETIC model")
    assert read_arpa(tmp_path / "synth-x.arpa").order == 3


def test_bad_arguments(toy_model, tmp_path):
    blocker = tmp_path / "f"
    blocker.write_text("")
    assert cli_main(["lm", "sample", "-q", "--arpa", str(toy_model), "--words", "0", "--seed", "1",
                     "--out", str(tmp_path / "o.txt")]) == 2
    assert cli_main(["lm", "sample", "-q", "--arpa", str(toy_model), "--words", "10", "--seed", "1",
                     "--out", str(blocker / "o.txt")]) == 2
    assert cli_main(["lm", "sample", "-q", "--arpa", str(tmp_path / "missing.arpa"), "--words", "10",
                     "--seed", "1", "--out", str(tmp_path / "o.txt")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
