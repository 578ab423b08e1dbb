"""gLM's B-tree trie LM: per-word scores and perplexity equal to the kenlm module's for every node size
and orders 3–5 (models estimated live from the shipped corpus), the plain, interleaved and threaded paths
identical, the layout's invariants, a Python-dict oracle for deep B-trees, clear errors, the size against
our probing LM, and the GPU against the CPU (skipped without a GPU)."""
from __future__ import annotations

import lzma
import math
import re
from pathlib import Path

import numpy as np
import pytest

kenlm = pytest.importorskip("kenlm")

from smtbench.lm import cuda  # noqa: E402
from smtbench.lm import backends  # noqa: E402
from smtbench.lm.arpa import ArpaModel, NgramTable, read_arpa  # noqa: E402
from smtbench.lm.btree import NONE, BTreeLM, BTreeModelError, stream_queries  # noqa: E402
from smtbench.lm.estimate import estimate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NODE_SIZES = [5, 7, 15, 31, 33, 59]
ORDERS = [3, 4, 5]
_TOKEN = re.compile(r"\w+|[^\w\s]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, list[str]]:
    """Train/test text from the shipped corpus (English side, lowercased, crude tokenization)."""
    d = tmp_path_factory.mktemp("btree_corpus")
    with lzma.open(ROOT / "resources/bible-es-en/es-en.tsv.xz", "rt", encoding="utf-8") as fh:
        lines = [" ".join(_TOKEN.findall(line.rstrip("\n").split("\t")[2].lower())) for _, line in
                 zip(range(4600), fh)]
    train, test = lines[:4000], lines[4000:]
    (d / "train.txt").write_text("\n".join(train) + "\n")
    return d, test + ["", "zzyzx unknownword", "and the lord said"]


@pytest.fixture(scope="module")
def models(corpus) -> dict[int, Path]:
    d, _ = corpus
    out = {}
    for n in ORDERS:
        out[n] = d / f"o{n}.arpa"
        estimate(d / "train.txt", n, out[n], memory="256M")
    return out


@pytest.fixture(scope="module")
def kenlm_scores(models, corpus) -> dict[int, list[list[tuple[float, int, bool]]]]:
    _, test = corpus
    out = {}
    for n, p in models.items():
        km = kenlm.Model(str(p))
        out[n] = [list(km.full_scores(s, bos=True, eos=True)) for s in test]
    return out


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("k", NODE_SIZES)
def test_kenlm_parity(order, k, models, corpus, kenlm_scores):
    _, test = corpus
    lm = BTreeLM(read_arpa(models[order]), node_size=k)
    q, sent, oov = lm.sentence_queries(test)
    prob, length = lm.query(q, interleave=0)
    ref = [s for sent_scores in kenlm_scores[order] for s in sent_scores]
    ref_p = np.array([r[0] for r in ref])
    ref_n = np.array([r[1] for r in ref])
    ref_oov = np.array([r[2] for r in ref])
    assert len(ref) == len(prob)
    np.testing.assert_allclose(prob, ref_p, rtol=0, atol=1e-5)
    assert np.array_equal(length, ref_n) and np.array_equal(oov, ref_oov)
    # perplexity (KenLM query: </s> counted, <s> not)
    ours = 10 ** (-float(prob.astype(np.float64).sum()) / len(prob))
    theirs = 10 ** (-float(ref_p.sum()) / len(ref_p))
    assert math.isclose(ours, theirs, rel_tol=1e-5)
    # the interleaved and threaded paths give the same bits
    for il, t in ((4, 1), (8, 2), (64, 3)):
        p2, l2 = lm.query(q, interleave=il, threads=t)
        assert np.array_equal(p2, prob) and np.array_equal(l2, length)


def test_toy_model_matches_kenlm_and_fact_sheet(toy_arpa):
    toy = toy_arpa
    km = kenlm.Model(str(toy))
    for k in (3, 5, 64):
        lm = BTreeLM.from_arpa(toy, node_size=k)
        for s in ("a b", "b b", "c a", "a b a b b a"):
            ours = lm.full_scores(s)
            ref = list(km.full_scores(s))
            assert [(round(p, 5), n, o) for p, n, o in ours] == [(round(p, 5), n, o) for p, n, o in ref]
    assert lm.score("a b") == pytest.approx(-0.6, abs=1e-6)


def test_layout_invariants(models):
    model = read_arpa(models[5])
    lm = BTreeLM(model, node_size=31)
    data = lm.data()
    assert lm.nbytes % 4 == 0 and len(data) == lm.nbytes
    # the root is the direct-indexed unigram array: {prob, backoff, child/4}
    root = data[: 12 * len(model.vocab)].view(np.float32).reshape(-1, 3)
    uni = model.ngrams[0]
    assert np.array_equal(root[uni.ids[:, 0], 0], uni.logprob)
    assert np.array_equal(root[uni.ids[:, 0], 1], uni.backoff)
    children = data[: 12 * len(model.vocab)].view(np.uint32).reshape(-1, 3)[:, 2].astype(np.int64) * 4
    has = children > 0
    assert (children[has] >= 12 * len(model.vocab)).all() and (children[has] < lm.nbytes).all()
    # breadth-first: the first child trie node follows the root directly; its header is its entry count
    assert children[has].min() == 12 * len(model.vocab)
    stats = lm.stats()
    assert [s["entries"] for s in stats] == model.counts[1:]
    for s in stats:
        assert 0 < s["b_stumps"] <= s["trie_nodes"] and 0.0 < s["b_stump_share"] <= 1.0
        assert s["max_btree_depth"] >= 1


def _bigram_model(vocab: int, fan: int) -> ArpaModel:
    """Order 2: word 1 has `fan` bigram predecessors (even ids), so its trie node is a deep B-tree."""
    words = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(vocab - 3)]
    rng = np.random.default_rng(7)
    uni = NgramTable(np.arange(vocab, dtype=np.uint32)[:, None], -rng.random(vocab).astype(np.float32),
                     -rng.random(vocab).astype(np.float32))
    ctx = np.arange(0, 2 * fan, 2, dtype=np.uint32)
    big = NgramTable(np.stack([ctx, np.full(fan, 3, np.uint32)], 1), -rng.random(fan).astype(np.float32),
                     np.zeros(fan, np.float32))
    return ArpaModel(2, words, {w: i for i, w in enumerate(words)}, [uni, big])


@pytest.mark.parametrize("k", [3, 4, 5, 8, 31, 32, 33, 59, 64])
@pytest.mark.parametrize("fan", [1, 2, 30, 31, 62, 63, 64, 500, 1999])
def test_deep_btree_against_dict_oracle(k, fan):
    model = _bigram_model(4000, fan)
    lm = BTreeLM(model, node_size=k)
    oracle = {int(c): float(p) for (c, _), p in zip(model.ngrams[1].ids, model.ngrams[1].logprob)}
    ctx = np.arange(4000, dtype=np.uint32)
    q = np.stack([np.full(4000, 3, np.uint32), ctx], 1)
    prob, length = lm.query(q, interleave=0)
    uni = model.ngrams[0]
    expect = np.array([oracle.get(c, uni.logprob[3] + uni.backoff[c]) for c in range(4000)], dtype=np.float32)
    assert np.array_equal(prob, expect)
    assert np.array_equal(length, np.where(np.isin(ctx, list(oracle)), 2, 1))
    # the interleaved walk (each node's whole key blocks compared, the last node's read past into the padding)
    p8, l8 = lm.query(q, interleave=8)
    assert np.array_equal(p8, prob) and np.array_equal(l8, length)
    (s,) = lm.stats()
    assert s["b_stumps"] == (1 if fan < k else 0)


def test_size_at_most_three_quarters_of_probing(models):
    from smtbench.lm.probing import ProbingLM

    model = read_arpa(models[5])
    probing = ProbingLM(model)
    for k in (5, 31, 59):
        assert BTreeLM(model, node_size=k).nbytes <= 0.75 * probing.nbytes


def test_backend_and_stream_match_probing(models, corpus):
    _, test = corpus
    model = read_arpa(models[4])
    enc = backends.encode_lines(model, test)
    ref = backends.make("sequential", model).score_stream(enc.tokens)
    got = backends.make("btree", model, node_size=7).score_stream(enc.tokens)
    np.testing.assert_allclose(got.logprob, ref.logprob, rtol=0, atol=1e-5)
    assert np.array_equal(got.length, ref.length)
    assert "btree" in backends.names() and "btree-cuda" in backends.names()
    q = stream_queries(enc.tokens, model.order)
    assert q.shape == (enc.queries, model.order) and (q[:, 0] != NONE).all()


@pytest.mark.parametrize("order", [3, 5])
@pytest.mark.parametrize("k", [5, 31])
def test_stream_reuse_is_bit_identical(order, k, models, corpus):
    """Back-offs taken from the previous row's walk give the very same floats and lengths as the second walk,
    for stream rows (reused), shuffled rows (no reuse possible) and a mix, any interleave and thread count."""
    _, test = corpus
    model = read_arpa(models[order])
    lm = BTreeLM(model, node_size=k)
    q = stream_queries(backends.encode_lines(model, test).tokens, model.order)
    rng = np.random.default_rng(order * 100 + k)
    mixed = q.copy()
    swap = rng.choice(len(q), size=len(q) // 10, replace=False)
    mixed[swap] = q[rng.permutation(swap)]
    for rows in (q, q[rng.permutation(len(q))], mixed):
        for interleave, threads in ((0, 1), (8, 1), (8, 2), (64, 3)):
            p0, l0 = lm.query(rows, interleave, threads)
            p1, l1 = lm.query(rows, interleave, threads, stream_reuse=True)
            assert np.array_equal(p0.view(np.uint32), p1.view(np.uint32))
            assert np.array_equal(l0, l1)


def test_bad_input_gives_clear_errors(models, tmp_path):
    model = read_arpa(models[3])
    for k in (2, 65, 0, -1, 3.5):
        with pytest.raises(ValueError, match="node size K"):
            BTreeLM(model, node_size=k)  # type: ignore[arg-type]
    lm = BTreeLM(model, node_size=5)
    with pytest.raises(ValueError, match="empty batch"):
        lm.query(np.zeros((0, 3), dtype=np.uint32))
    with pytest.raises(ValueError, match="array of word ids"):
        lm.query(np.zeros((4, 2), dtype=np.uint32))
    with pytest.raises(ValueError, match="word ids must be"):
        lm.query(np.array([[len(model.vocab), NONE, NONE]], dtype=np.uint32))
    with pytest.raises(ValueError, match="interleave"):
        lm.query(np.zeros((1, 3), dtype=np.uint32), interleave=65)
    # a pruned ARPA whose 3-gram lacks its 2-gram suffix
    pruned = tmp_path / "pruned.arpa"
    pruned.write_text("\\data\\\nngram 1=4\nngram 2=2\nngram 3=1\n\n\\1-grams:\n-1\t<unk>\n-1\t<s>\t-0.5\n-1\t</s>\n"
                      "-1\ta\t-0.5\n\n\\2-grams:\n-0.5\t<s> a\t-0.2\n-0.5\ta </s>\n\n\\3-grams:\n-0.1\t<s> a a\n\n"
                      "\\end\\\n")
    with pytest.raises(BTreeModelError, match="'<s> a a' has no 2-gram suffix"):
        BTreeLM.from_arpa(pruned)
    # csrc's sb_btree_sort_tables names a repeated n-gram and a unigram table that is not one entry a word
    from smtbench.lm.btree import sort_tables
    dup = read_arpa(models[3])
    t = dup.ngrams[1]
    t.ids[1] = t.ids[0]
    with pytest.raises(BTreeModelError, match="duplicate 2-gram entries"):
        sort_tables(dup, "dup")
    uni = read_arpa(models[3])
    uni.ngrams[0].ids[1] = uni.ngrams[0].ids[0]
    with pytest.raises(BTreeModelError, match="exactly one unigram entry"):
        sort_tables(uni, "uni")


def test_gpu_matches_cpu(models, corpus):
    ok, why = cuda.available()
    if not ok:
        pytest.skip(f"no GPU: {why}")
    _, test = corpus
    for order in ORDERS:
        model = read_arpa(models[order])
        for k in (5, 31, 59):
            lm = BTreeLM(model, node_size=k)
            q, _, _ = lm.sentence_queries(test)
            p_cpu, l_cpu = lm.query(q)
            p_gpu, l_gpu = cuda.CudaBTreeLM(lm).query(q)
            assert np.array_equal(p_cpu, p_gpu) and np.array_equal(l_cpu, l_gpu)


def test_default_interleave_is_one_number() -> None:
    """SB_BTREE_DEFAULT_INTERLEAVE (csrc/lm/btree.h: the library's, the count point's and the device driver's) is the
    glm_btree experiment's default and the config schema's (test_experiments holds the CLI's to the schema's)."""
    import yaml

    from smtbench.experiments.glm_btree import BTreeBench
    from smtbench.lm.btree import DEFAULT_INTERLEAVE

    schema = yaml.safe_load((Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml")
                            .read_text())
    assert schema["$defs"]["glm_btree"]["properties"]["interleave"]["default"] == DEFAULT_INTERLEAVE
    assert BTreeBench.interleave == DEFAULT_INTERLEAVE
