"""The probing LM against the `kenlm` module: per-word log10 p within 1e-5 and identical matched
lengths, sequential path and every automaton queue size 1-16, on hand-made edge-case ARPAs and on
3-/5-gram models of the shipped corpus."""
from __future__ import annotations

import json
import lzma
import math
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smtbench.lm import backends
from smtbench.lm.arpa import ArpaFormatError, ArpaModel, NgramTable, read_arpa, write_arpa
from smtbench.lm.probing import ProbingLM

kenlm = pytest.importorskip("kenlm")

ROOT = Path(__file__).resolve().parents[1]
QUEUES = list(range(0, 17))  # 0 = sequential

from toy_models import TOY_ARPA as TOY  # noqa: E402

EDGE_SENTENCES = ["a b", "b b", "c a", "", "a b a b a b a b a b a b", "c c c a b zz b a",
                  "a b </s> a b", "<s> a b", "b a b a </s>", "x", "a a a a a a a a a a a"]


def kenlm_scores(model, lines):
    out = []
    for line in lines:
        out.extend((p, n) for p, n, _ in model.full_scores(line, bos=True, eos=True))
    return np.array([p for p, _ in out]), np.array([n for _, n in out])


def kenlm_model(path):
    """kenlm.Model; this build of the module cannot read .gz, so decompress beside it first."""
    path = Path(path)
    if path.suffix == ".gz":
        import gzip
        plain = path.with_name(path.name[:-3] + ".plain")
        if not plain.exists():
            plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    return kenlm.Model(str(path))


def assert_parity(path, lines, queues=QUEUES):
    km = kenlm_model(path)
    ref_p, ref_n = kenlm_scores(km, lines)
    lm = ProbingLM(path)
    enc = lm.encode(lines)
    assert enc.queries == len(ref_p)
    first = None
    for q, pf in [(q, False) for q in queues] + [(q, True) for q in queues]:
        r = lm.score_stream(enc.tokens, q, prefetch_all=pf)
        np.testing.assert_allclose(r.logprob, ref_p, atol=1e-5, rtol=0, err_msg=f"queue {q}")
        np.testing.assert_array_equal(r.length, ref_n, err_msg=f"queue {q}")
        if first is None:
            first = r
        else:  # bit-identical to the sequential path
            assert r.logprob.tobytes() == first.logprob.tobytes(), f"queue {q}"
            assert r.log10_sum == first.log10_sum
    # the corpus sum agrees with kenlm's per-sentence totals
    assert first.log10_sum == pytest.approx(sum(km.score(l, bos=True, eos=True) for l in lines), abs=1e-3)
    return lm, first


def _variant(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_toy_matches_fact_sheet(tmp_path):
    lm = ProbingLM(_variant(tmp_path, "toy.arpa", TOY))
    got = [lm.score_sentence(s) for s in ["a b", "b b", "c a"]]
    want = [[(-0.3, 2), (-0.2, 3), (-0.1, 3)], [(-1.3, 1), (-1.0, 1), (-0.5, 2)],
            [(-1.5, 1), (-0.6, 1), (-1.0, 1)]]
    for g, w in zip(got, want):
        assert [n for _, n in g] == [n for _, n in w]
        assert [p for p, _ in g] == pytest.approx([p for p, _ in w], abs=1e-6)


EDGE = {
    "toy": TOY,
    "no_unk": TOY.replace("ngram 1=5", "ngram 1=4").replace("-1.0\t<unk>\t0\n", ""),
    "upper_unk": TOY.replace("<unk>", "<UNK>"),
    "zero_bos": TOY.replace("-99\t<s>", "0\t<s>"),
    "explicit_zero_backoffs": TOY.replace("-0.7\t</s>", "-0.7\t</s>\t0").replace("-0.5\tb </s>", "-0.5\tb </s>\t0"),
    "no_backoff_context": TOY.replace("-0.4\ta b\t-0.15", "-0.4\ta b"),
    # order 4: sentences run far past the order
    "fourgram": TOY.replace("ngram 3=2", "ngram 3=2\nngram 4=1").replace(
        "-0.2\t<s> a b\n", "-0.2\t<s> a b\t-0.05\n").replace("\\end\\", "\\4-grams:\n-0.05\t<s> a b </s>\n\n\\end\\"),
    # pruned: 'a b' and 'a b </s>' missing; '<s> a b' needs a blank 'a b' (KenLM's FixSRI).
    # Padding bigrams keep KenLM's probing table big enough for the blank.
    "pruned_blank": TOY.replace("ngram 1=5", "ngram 1=35").replace("ngram 2=4", "ngram 2=33")
    .replace("ngram 3=2", "ngram 3=1").replace("-0.4\ta b\t-0.15\n", "".join(f"-1.5\t<s> p{i}\n" for i in range(30)))
    .replace("-0.1\ta b </s>\n", "").replace("-0.8\tb\t-0.2\n", "-0.8\tb\t-0.2\n" + "".join(f"-3\tp{i}\n" for i in range(30))),
}


@pytest.mark.parametrize("name", sorted(EDGE))
def test_edge_case_parity(tmp_path, name):
    path = _variant(tmp_path, f"{name}.arpa", EDGE[name])
    try:
        kenlm.Model(str(path))
    except Exception as exc:  # pragma: no cover - kenlm refusing is a fact about the fixture
        pytest.skip(f"kenlm refuses this fixture: {exc}")
    assert_parity(path, EDGE_SENTENCES)


def test_state_api_matches_kenlm(tmp_path):
    """score(state, word) -> (log10 p, new state, matched length), with right-state minimisation."""
    path = _variant(tmp_path, "toy.arpa", TOY)
    lm, km = ProbingLM(path), kenlm.Model(str(path))
    for sent in ["a b", "c a", "b a b a b"]:
        st, ks = lm.begin_state(), kenlm.State()
        km.BeginSentenceWrite(ks)
        for w in sent.split() + ["</s>"]:
            p, st, n = lm.score(st, w)
            out = kenlm.State()
            ref = km.BaseFullScore(ks, w, out)
            ks = out
            assert p == pytest.approx(ref.log_prob, abs=1e-6) and n == ref.ngram_length
    # after OOV 'c' the state is empty (<unk> never extends); after 'a' it is [a]
    _, st, _ = lm.score(lm.begin_state(), "c")
    assert lm.state_words(st) == []
    _, st, _ = lm.score(lm.begin_state(), "a")
    assert lm.state_words(st) == [lm.model.word_id["a"], lm.model.word_id["<s>"]]
    _, st, _ = lm.score(lm.null_state(), "b")
    assert lm.state_words(st) == [lm.model.word_id["b"]]


def test_pruned_blank_value(tmp_path):
    lm = ProbingLM(_variant(tmp_path, "p.arpa", EDGE["pruned_blank"]))
    assert lm.blanks >= 1
    # 'x a b': the blank 'a b' = p(b) + b(a) = -0.8 - 0.3, matched length 2
    got = lm.score_sentence("x a b")
    assert got[2][1] == 2 and got[2][0] == pytest.approx(-1.1, abs=1e-6)


def test_missing_context_refused(tmp_path):
    text = TOY.replace("ngram 3=2", "ngram 3=3").replace("-0.1\ta b </s>", "-0.1\ta b </s>\n-0.1\tb b a")
    with pytest.raises(ArpaFormatError, match="context of the 3-gram 'b b a'"):
        ProbingLM(_variant(tmp_path, "c.arpa", text))


def test_missing_sentence_markers_refused(tmp_path):
    text = TOY.replace("ngram 1=5", "ngram 1=4").replace("-0.7\t</s>\n", "").replace(
        "ngram 2=4", "ngram 2=3").replace("-0.5\tb </s>\n", "").replace("ngram 3=2", "ngram 3=1").replace(
        "-0.1\ta b </s>\n", "")
    with pytest.raises(ValueError, match="</s>"):
        ProbingLM(_variant(tmp_path, "n.arpa", text))


# ---- real models on the shipped corpus ----

def _corpus_lines() -> list[str]:
    for p in (ROOT / "resources/bible-es-en/es-en.tsv.xz", Path("/work/shared/data/bible-es-en/es-en.tsv.xz")):
        if p.exists():
            with lzma.open(p, "rt", encoding="utf-8") as fh:
                return [line.rstrip("\n").split("\t")[2] for line in fh]
    pytest.skip("the bible-es-en corpus is not shipped")


def _lmplz() -> str | None:
    b = ROOT / "build/lmplz/bin/lmplz"
    return str(b) if b.exists() else shutil.which("lmplz")


def toy_estimate(lines: list[str], order: int) -> ArpaModel:
    """A small absolute-discounting back-off model (only for when lmplz is absent): every prefix and
    suffix of a listed n-gram is listed, as in a Kneser-Ney model."""
    counts = [Counter() for _ in range(order)]
    for line in lines:
        w = ["<s>"] + line.split() + ["</s>"]
        for n in range(1, order + 1):
            for i in range(len(w) - n + 1):
                counts[n - 1][tuple(w[i:i + n])] += 1
    vocab = ["<unk>"] + sorted(g[0] for g in counts[0])
    wid = {w: i for i, w in enumerate(vocab)}
    ctx_tot = [Counter() for _ in range(order)]
    ctx_types = [Counter() for _ in range(order)]
    for n in range(2, order + 1):
        for g, c in counts[n - 1].items():
            ctx_tot[n - 1][g[:-1]] += c
            ctx_types[n - 1][g[:-1]] += 1
    total = sum(counts[0].values())
    tables = []
    for n in range(1, order + 1):
        grams = sorted(counts[n - 1]) if n > 1 else [(w,) for w in vocab]
        ids = np.array([[wid[w] for w in g] for g in grams], dtype=np.uint32).reshape(len(grams), n)
        lp, bo = [], []
        for g in grams:
            if n == 1:
                c = counts[0].get(g, 0)
                lp.append(-99.0 if g == ("<s>",) else (math.log10(c / total) if c else -6.0))
            else:
                lp.append(math.log10((counts[n - 1][g] - 0.5) / ctx_tot[n - 1][g[:-1]]))
            t = ctx_types[n].get(g, 0) if n < order else 0
            bo.append(math.log10(0.5 * t / ctx_tot[n][g]) if t else 0.0)
        tables.append(NgramTable(ids, np.float32(lp), np.float32(bo)))
    return ArpaModel(order, vocab, wid, tables)


@pytest.fixture(scope="module")
def corpus_models(tmp_path_factory):
    lines = _corpus_lines()
    train, test = lines[:6000], lines[20000:20600]
    d = tmp_path_factory.mktemp("lm")
    (d / "train.txt").write_text("\n".join(train) + "\n")
    models = {}
    lmplz = _lmplz()
    for order in (3, 5):
        path = d / f"bible{order}.arpa"
        if lmplz:
            with open(d / "train.txt") as fin, open(path, "w") as fout:
                subprocess.run([lmplz, "-o", str(order), "-S", "100M", "-T", str(d), "--discount_fallback"],
                               stdin=fin, stdout=fout, stderr=subprocess.DEVNULL, check=True)
        else:
            write_arpa(toy_estimate(train[:3000], order), path)
        models[order] = path
    return models, test


@pytest.mark.parametrize("order", [3, 5])
def test_corpus_model_parity(corpus_models, order):
    models, test = corpus_models
    lm, r = assert_parity(models[order], test + ["", "zzzz qqqq", " ".join(test[:5])])
    assert r.length.max() == order


def test_toy_estimator_parity(tmp_path):
    """Our own fixture estimator's ARPA (written by write_arpa) is scored identically too."""
    lines = _corpus_lines()
    path = tmp_path / "toy4.arpa.gz"
    write_arpa(toy_estimate(lines[:400], 4), path)
    assert_parity(path, lines[1000:1100], queues=[0, 1, 5, 16])


@pytest.fixture(scope="module")
def small_lm(corpus_models):
    models, test = corpus_models
    vocab = sorted({w for line in test[:50] for w in line.split()})[:40]
    return ProbingLM(models[3]), kenlm.Model(str(models[3])), vocab


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_sentences(small_lm, data):
    lm, km, vocab = small_lm
    words = st.sampled_from(vocab + ["OOVWORD", "<s>", "</s>", "<unk>"])
    sents = data.draw(st.lists(st.lists(words, max_size=25).map(" ".join), min_size=1, max_size=6))
    q = data.draw(st.integers(0, 16))
    pf = data.draw(st.booleans())  # every order's bucket requested when a query starts, or not
    ref_p, ref_n = kenlm_scores(km, sents)
    r = lm.score_stream(lm.encode(sents).tokens, q, prefetch_all=pf)
    np.testing.assert_allclose(r.logprob, ref_p, atol=1e-5, rtol=0)
    np.testing.assert_array_equal(r.length, ref_n)


def test_score_corpus_and_backends(corpus_models):
    models, test = corpus_models
    lm = ProbingLM(models[3])
    enc = lm.encode(test[:100])
    seq = lm.score_corpus(enc, "sequential")
    aut = lm.score_corpus(enc.tokens, "automaton", 7)
    assert seq.logprob.tobytes() == aut.logprob.tobytes()
    assert {"sequential", "automaton"} <= set(backends.names())
    sc = backends.make("automaton", lm.model, queue_size=3)
    assert sc.score_stream(enc.tokens).log10_sum == seq.log10_sum
    with pytest.raises(ValueError, match="unknown LM backend"):
        backends.make("nope", lm.model)
    with pytest.raises(ValueError):
        lm.score_stream(enc.tokens, 17)


@pytest.mark.parametrize("order", [3, 5])
def test_line_aligned_layout_scores_identically(corpus_models, order):
    """Probing from the ideal bucket's cache line (the '-line' backends) changes where n-grams sit, not a bit of any
    score, length or state, sequential or through the automaton queue."""
    models, test = corpus_models
    plain, line = ProbingLM(models[order]), ProbingLM(models[order], line_aligned=True)
    assert line.line_aligned and not plain.line_aligned
    enc = plain.encode(test[:300] + ["oovword " * 3])
    for q in (0, 1, 8, 16):
        a, b = plain.score_stream(enc.tokens, q), line.score_stream(enc.tokens, q)
        assert a.logprob.tobytes() == b.logprob.tobytes() and a.length.tobytes() == b.length.tobytes()
    for be in ("sequential-line", "automaton-line"):
        assert backends.make(be, plain.model, queue_size=4).score_stream(enc.tokens).log10_sum == a.log10_sum


def test_ppl_cli_matches_kenlm(corpus_models, tmp_path, capsys):
    from smtbench.cli import main

    models, test = corpus_models
    text = tmp_path / "t.txt"
    text.write_text("\n".join(test[:200] + ["", "oovword another"]) + "\n")
    outs = []
    for extra in ([], ["--backend", "automaton", "--queue-size", "5"]):
        assert main(["lm", "ppl", "--arpa", str(models[5]), "--text", str(text), *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    a, b = outs
    assert a["log10_sum"] == b["log10_sum"] and a["tokens"] == b["tokens"]
    km = kenlm.Model(str(models[5]))
    lines = text.read_text().split("\n")[:-1]
    total = sum(km.score(l) for l in lines)
    words = sum(len(l.split()) for l in lines)
    assert a["tokens"] == words + len(lines)
    assert a["log10_sum"] == pytest.approx(total, abs=1e-3)
    assert a["perplexity"] == pytest.approx(10 ** (-total / a["tokens"]), rel=1e-6)
    oovs = sum(1 for l in lines for w in l.split() if w not in km)
    assert a["oovs"] == oovs
    assert a["perplexity_excluding_oovs"] > 0


def test_ppl_cli_bad_arpa(tmp_path, capsys):
    from smtbench.cli import main

    bad = tmp_path / "bad.arpa"
    bad.write_text(TOY.replace("ngram 2=4", "ngram 2=9"))
    text = tmp_path / "t.txt"
    text.write_text("a b\n")
    assert main(["lm", "ppl", "--arpa", str(bad), "--text", str(text)]) == 2
    assert f"{bad}:19:" in capsys.readouterr().err


def test_ppl_cli_empty_text(tmp_path, capsys):
    """An empty text has no perplexity: a clear error, not `"perplexity": NaN`."""
    from smtbench.cli import main

    arpa = tmp_path / "toy.arpa"
    arpa.write_text(TOY)
    text = tmp_path / "empty.txt"
    text.write_text("")
    for backend in ("sequential", "automaton"):
        assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(text), "--backend", backend]) == 2
        assert "empty.txt: empty text" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("order", [3, 5])
def test_full_corpus_parity(order, tmp_path):
    """Acceptance: a model of the whole training split (lmplz, else our estimator), the whole test split,
    every queue size: per-word parity with kenlm (1e-5, identical lengths)."""
    train, test = ROOT / "work/data/train.en", ROOT / "work/data/test.en"
    if not (train.exists() and test.exists()):
        pytest.skip("work/data is not prepared (snakemake rule data_prepare)")
    path = tmp_path / f"full{order}.arpa"
    lmplz = _lmplz()
    if lmplz:
        with open(train) as fin, open(path, "w") as fout:
            subprocess.run([lmplz, "-o", str(order), "-S", "200M", "-T", str(tmp_path)], stdin=fin, stdout=fout,
                           stderr=subprocess.DEVNULL, check=True)
    else:
        from smtbench.cli import main

        assert main(["lm", "estimate", "--order", str(order), "--text", str(train), "--arpa", str(path), "-q"]) == 0
    lines = test.read_text(encoding="utf-8").split("\n")[:-1]
    lm, r = assert_parity(path, lines)
    assert r.length.max() == order


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_long_runs_never_outrun_the_automaton_ring(small_lm, data):
    """Runs of words that finish on their first step (unknown words), <s>-like and independent-left words, longer
    than the automaton ring (1,024 positions): every queue size gives the sequential path's scores, bit for bit
    (issue: the dispatcher ran ahead of a waiting query and reused its predecessor's slot)."""
    lm, km, vocab = small_lm
    runs = st.tuples(st.sampled_from(["OOVWORD", "<unk>", "<s>", vocab[0], vocab[1]]), st.integers(1, 2600))
    pieces = data.draw(st.lists(st.one_of(runs, st.sampled_from(vocab).map(lambda w: (w, 1))), min_size=1,
                                max_size=6))
    sent = " ".join(" ".join([w] * k) for w, k in pieces)
    sents = [vocab[2] + " " + sent + " " + vocab[3], sent]
    tokens = lm.encode(sents).tokens
    seq = lm.score_stream(tokens, 0)
    for q in (1, 2, 8, 16):
        for pf in (False, True):
            r = lm.score_stream(tokens, q, prefetch_all=pf)
            assert r.logprob.tobytes() == seq.logprob.tobytes(), (q, pf)
            np.testing.assert_array_equal(r.length, seq.length)
    ref_p, _ = kenlm_scores(km, sents)
    np.testing.assert_allclose(seq.logprob, ref_p, atol=1e-4, rtol=0)


def test_issue_reproducer_long_oov_run(small_lm):
    lm, km, vocab = small_lm
    for n in (1019, 1030, 5000):
        sents = ["and " + "zzzoov " * n + "and the lord"]
        tokens = lm.encode(sents).tokens
        seq = lm.score_stream(tokens, 0)
        for q in (1, 4, 8, 16):
            assert lm.score_stream(tokens, q).logprob.tobytes() == seq.logprob.tobytes(), (n, q)
            assert lm.score_stream(tokens, q, prefetch_all=True).logprob.tobytes() == seq.logprob.tobytes(), (n, q)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_state_batch_equals_single_queries(small_lm, data):
    """The decoders' batch API: many (state, word) queries, out-states and scores identical to one sb_lm_score
    each, for every queue size."""
    from smtbench.native import ffi, lib
    lm, km, vocab = small_lm
    ids = [lm.model.word_id.get(w, lm.unk) for w in vocab] + [lm.unk, lm.eos, 10**9]
    contexts = data.draw(st.lists(st.lists(st.sampled_from(ids[:-1]), max_size=5), min_size=1, max_size=40))
    words = data.draw(st.lists(st.sampled_from(ids), min_size=len(contexts), max_size=len(contexts)))
    states = ffi.new("sb_lm_state[]", len(contexts))
    for i, ctx in enumerate(contexts):
        st_ = lm.begin_state() if i % 3 else lm.null_state()
        for w in ctx:
            _, st_, _ = lm.score(st_, w)
        states[i] = st_[0]
    ref_p, ref_n, ref_s = [], [], []
    for i, w in enumerate(words):
        p, out, nlen = lm.score(states + i, w)
        ref_p.append(p)
        ref_n.append(nlen)
        ref_s.append(bytes(ffi.buffer(out)))
    for q in range(0, 17):
        out, probs, lengths = lm.score_batch(states, words, q)
        assert probs.tolist() == [float(np.float32(p)) for p in ref_p], q
        assert lengths.tolist() == ref_n, q
        for i in range(len(words)):
            o = out[i]
            r = ffi.from_buffer("sb_lm_state *", bytearray(ref_s[i]))
            assert o.length == r.length and list(o.words)[:o.length] == list(r.words)[:r.length], (q, i)
            assert [o.backoff[k] for k in range(o.length)] == [r.backoff[k] for k in range(r.length)], (q, i)
    assert lib.SB_LM_MAX_QUEUE == 16


@pytest.mark.parametrize("order", [3, 5])
def test_prefetch_all_scores_identically(corpus_models, order):
    """Requesting every order's bucket when a query starts (the '-pf' backends, flag SB_LM_PREFETCH_ALL) changes when
    lines arrive, not a bit of any score or length, sequential or through the automaton queue; sentences of every
    length (contexts shorter than the order) and OOVs included."""
    models, test = corpus_models
    lm = ProbingLM(models[order])
    enc = lm.encode(test[:300] + ["", "oovword " * 3, "a"])
    ref = lm.score_stream(enc.tokens, 0)
    for q in (0, 1, 2, 8, 16):
        r = lm.score_stream(enc.tokens, q, prefetch_all=True)
        assert r.logprob.tobytes() == ref.logprob.tobytes() and r.length.tobytes() == ref.length.tobytes()
    for be in ("sequential-pf", "automaton-pf"):
        assert backends.make(be, lm.model, queue_size=5, lm=lm).score_stream(enc.tokens).log10_sum == ref.log10_sum
