"""Our MERT and k-best MIRA against Moses' own ``mert`` and ``kbmira`` on the same n-best lists and the same
sufficient statistics (Moses' ``extractor``): the n-best BLEU (Moses' statistics) of the two weight vectors within
0.1. The n-best lists: a fixed synthetic one the test writes (no ../shared needed) and, when the oracle is there,
Moses2's own n-best list of the oracle's dev run. Skips with the reason when the programs are not built (CI builds
them: make moses-test)."""
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


@pytest.mark.parametrize("source", ["synthetic", "oracle"])
def test_ours_and_moses_reach_the_same_nbest_bleu(tmp_path, source: str) -> None:
    from smtbench.tune.moses import compare

    nbests, refs, layout, start = (_synthetic_nbest if source == "synthetic" else _oracle_nbest)(tmp_path)
    rows = compare(nbests, refs, layout, start, seed=3, workdir=tmp_path / "work")
    for opt in ("mert", "mira"):
        ours, moses = (next(r for r in rows if r["optimizer"] == opt and r["side"] == side)
                       for side in ("ours", "moses"))
        print(f"{source} {opt}: n-best BLEU ours {ours['nbest_bleu']:.3f} Moses {moses['nbest_bleu']:.3f} "
              f"(start {ours['start_bleu']:.3f}), cosine {ours['cosine']:.3f}", file=sys.stderr)
        assert abs(ours["nbest_bleu"] - moses["nbest_bleu"]) <= 0.1
        assert ours["nbest_bleu"] > ours["start_bleu"]
        assert abs(ours["nbest_bleu"] - ours["own_bleu"]) < 1e-6  # our BLEU on Moses' statistics = on ours
        if opt == "mert":  # mert reports its optimum's BLEU on the same statistics
            assert abs(moses["nbest_bleu"] - moses["own_bleu"]) < 1e-3
