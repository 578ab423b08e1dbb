"""Our MERT and k-best MIRA against Moses' own ``mert`` and ``kbmira`` on the same n-best lists and the same
sufficient statistics (Moses' ``extractor``; ``compare`` checks ours equal its). The n-best lists: a fixed synthetic
one the test writes (no ../shared needed) and, when the oracle is there, Moses2's own n-best list of its dev run.

* MERT from the same starting point without random restarts is deterministic on both sides: the same optimum
  (n-best BLEU within 0.1 - in practice equal - and cosine ~1). With 20 random restarts each side draws its own
  random points (Moses' stream is not reproduced), so their optima may differ; each is at least its no-restart one.
* kbmira drops hypotheses before it optimises: its dedup set compares an item with itself
  (mert/FeatureDataIterator.cpp: ``item1.dense==item1.dense``), so any hypothesis hashed into an occupied bucket
  counts as a duplicate. Its weights are then fitted to a subset; the test prints both sides' n-best BLEU on the
  full lists and asserts only that both improve on the start. ``kbmira-dedupfix`` (tools/build_moses.sh: that one
  line fixed) sees every hypothesis: its own BLEU is its weights' n-best BLEU, and its weights are near ours (the
  issue's cosine >= 0.9; measured 0.990 on Moses2's dev n-best list, 0.998 on the synthetic one, where the shipped
  kbmira gives 0.884 and 0.980). On Moses2's list the n-best BLEU is within 0.1 (29.431 vs 29.436; the tuning
  run's lists: 30.13 vs 30.07, results/tables/tune_optimizers.md). On the synthetic 80-sentence list it is NOT:
  60.55 vs 61.21 (shuffled, 20 epochs; 61.58 vs 61.87 unshuffled, 60 epochs) - printed, not asserted, an open
  difference between our MIRA and kbmira's.

Skips with the reason when the programs are not built (CI builds them: make moses-test)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from smtbench import moses_peer

from conftest import HAVE_ORACLE, ORACLE

MISSING = [p for p in ("extractor", "mert", "kbmira") if not moses_peer.available(p)]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"Moses' {', '.join(MISSING)} not built (make moses-test)")

LAYOUT = [("WordPenalty0", 1), ("TranslationModel0", 3), ("LM0", 1)]


def _synthetic_nbest(tmp, sentences: int = 80, hyps: int = 25, seed: int = 11):
    """A Moses-format n-best list whose features carry some signal about BLEU, and its reference."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(7)]
    refs, lines = [], []
    for s in range(sentences):
        ref = list(rng.choice(vocab, int(rng.integers(6, 14))))
        refs.append(" ".join(ref))
        for _ in range(hyps):
            words = [w if rng.random() < 0.65 else str(rng.choice(vocab)) for w in ref]
            words = words[: max(1, len(ref) + int(rng.integers(-3, 2)))]
            good = sum(a == b for a, b in zip(words, ref)) / len(ref)
            f = np.round([-len(words), *(rng.normal(size=3) + [2 * good, good, 0]), rng.normal() - 3 * (1 - good)],
                         4)
            lines.append(f"{s} ||| {' '.join(words)} ||| UnknownWordPenalty0= 0 WordPenalty0= {f[0]:g} "
                         f"TranslationModel0= {f[1]:g} {f[2]:g} {f[3]:g} LM0= {f[4]:g} ||| 0")
    (tmp / "ref").write_text("\n".join(refs) + "\n")
    (tmp / "nbest").write_text("\n".join(lines) + "\n")
    return [tmp / "nbest"], [str(tmp / "ref")], LAYOUT, [-0.3, 0.2, 0.2, 0.2, 0.5]


def _oracle_nbest(tmp):
    if not HAVE_ORACLE:
        pytest.skip("Moses oracle not present")
    from smtbench.decode.ini import load_ini
    from smtbench.tune.loop import tuneable_layout, weights_of

    cfg = load_ini(ORACLE / "moses.ini")
    layout = tuneable_layout(cfg)
    return [ORACLE / "m2-cube400.nbest.xz"], [str(ORACLE / "dev.en")], layout, list(weights_of(cfg, layout))


def _sides(rows, opt, program=None):
    return [next(r for r in rows if r["optimizer"] == opt and r["side"] == side
                 and (program is None or side == "ours" or r["program"] == program)) for side in ("ours", "moses")]


@pytest.mark.parametrize("source", ["synthetic", "oracle"])
def test_ours_and_moses_on_the_same_nbest_lists(tmp_path, source: str) -> None:
    from smtbench.tune.moses import compare

    nbests, refs, layout, start = (_synthetic_nbest if source == "synthetic" else _oracle_nbest)(tmp_path)
    exact = compare(nbests, refs, layout, start, seed=3, workdir=tmp_path / "w0", restarts=0, optimizers=["mert"])
    ours0, moses0 = _sides(exact, "mert")
    print(f"{source} mert, no restarts: n-best BLEU ours {ours0['nbest_bleu']:.3f} Moses {moses0['nbest_bleu']:.3f} "
          f"(start {ours0['start_bleu']:.3f}), cosine {ours0['cosine']:.4f}", file=sys.stderr)
    assert abs(ours0["nbest_bleu"] - moses0["nbest_bleu"]) <= 0.1 and ours0["cosine"] >= 0.999
    assert ours0["nbest_bleu"] > ours0["start_bleu"]
    assert abs(moses0["nbest_bleu"] - moses0["own_bleu"]) < 1e-3  # mert's report = its weights on the same files

    rows = compare(nbests, refs, layout, start, seed=3, workdir=tmp_path / "w20", restarts=20, mira_epochs=20)
    ours, moses = _sides(rows, "mert")
    print(f"{source} mert, 20 restarts: ours {ours['nbest_bleu']:.3f} Moses {moses['nbest_bleu']:.3f}, "
          f"cosine {ours['cosine']:.4f}", file=sys.stderr)
    assert ours["nbest_bleu"] >= ours0["nbest_bleu"] - 1e-6 and moses["nbest_bleu"] >= moses0["nbest_bleu"] - 1e-3
    ours, moses = _sides(rows, "mira")
    print(f"{source} mira: ours {ours['nbest_bleu']:.3f} kbmira {moses['nbest_bleu']:.3f} (kbmira's own report "
          f"{moses['own_bleu']:.3f}), cosine {ours['cosine']:.4f}", file=sys.stderr)
    assert ours["nbest_bleu"] > ours["start_bleu"] and moses["nbest_bleu"] > moses["start_bleu"]
    assert abs(ours["nbest_bleu"] - ours["own_bleu"]) < 1e-6  # our BLEU on Moses' statistics = on ours
    if moses_peer.available("kbmira-dedupfix"):
        _, fixed = _sides(rows, "mira", "kbmira-dedupfix")
        print(f"{source} mira: kbmira-dedupfix {fixed['nbest_bleu']:.3f} (own report {fixed['own_bleu']:.3f}), "
              f"cosine {fixed['cosine']:.4f}", file=sys.stderr)
        assert abs(fixed["nbest_bleu"] - fixed["own_bleu"]) < 0.01  # it optimised on every hypothesis
        assert fixed["cosine"] >= 0.9
        if source == "oracle":
            assert abs(ours["nbest_bleu"] - fixed["nbest_bleu"]) <= 0.1
