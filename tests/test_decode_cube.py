"""Moses2's cube pruning, checked live against Moses2's own cube-pruning run (pop limit 400, -s 400) and the
independent derivation scorer."""
from __future__ import annotations


import pytest

from conftest import HAVE_ORACLE, ORACLE

needs_oracle = pytest.mark.skipif(not HAVE_ORACLE, reason="Moses oracle not present")
N = 40


@pytest.fixture(scope="module")
def model(any_model):
    """The small model the tests train (every clone) and the oracle's (where present)."""
    return any_model[0]


@pytest.fixture(scope="module")
def dev(any_model) -> list[str]:
    return any_model[1]


@needs_oracle
def test_cube_matches_moses2(oracle_model) -> None:
    model = oracle_model
    from smtbench.decode.cube import CubeDecoder
    src = (ORACLE / "dev.es").read_text(encoding="utf-8").splitlines()
    ref = (ORACLE / "m2-cube400.1best").read_text(encoding="utf-8").splitlines()
    scores = [float(x) for x in (ORACLE / "m2-cube400.1best-score").read_text().split()]
    dec = CubeDecoder(model, pop_limit=400, stack_size=400)
    for i in range(N):
        best = dec.translate(src[i]).best
        assert best.text == ref[i].strip(), i
        assert best.total == pytest.approx(scores[i], abs=1.5e-3), i


def test_cube_nbest_rescores_and_edges(model, dev) -> None:
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    src = dev[:2]
    dec = CubeDecoder(model, pop_limit=50, stack_size=50, nbest=5)
    scorer = DerivationScorer(model.config, src)
    for sid, line in enumerate(src):
        tr = dec.translate(line)
        assert len(tr.entries) == 5
        for e in tr.entries:
            got = scorer.score(sid, parse_segmentation(e.segmentation))
            assert got.total == pytest.approx(e.total, abs=1e-4)
    assert dec.translate("").best.text == ""
    assert dec.translate("qqzx").best.text == "qqzx"
    with pytest.raises(ValueError, match="--pop-limit 0"):
        CubeDecoder(model, pop_limit=0)


def test_pipeline_tolerant_equals_lazy_for_every_queue_size(model, dev) -> None:
    """Mokry 3.3: the popped hypotheses' LM through the automaton queue gives exactly the scores the sequential LM
    gives them at pop time (lazy scoring, same pop order), for every queue size; the outputs rescore."""
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    src = dev[:6]
    lazy = CubeDecoder(model, pop_limit=100, stack_size=100, lm_pipeline="lazy", nbest=3)
    ref = [lazy.translate(line) for line in src]
    for q in (0, 1, 2, 5, 8, 16):
        dec = CubeDecoder(model, pop_limit=100, stack_size=100, lm_pipeline="queue", queue_size=q, nbest=3)
        for line, r in zip(src, ref):
            got = dec.translate(line)
            assert [(e.text, e.search_score, e.total) for e in got.entries] == \
                   [(e.text, e.search_score, e.total) for e in r.entries], q
    scorer = DerivationScorer(model.config, src)
    for sid, r in enumerate(ref):
        for e in r.entries:
            assert scorer.score(sid, parse_segmentation(e.segmentation)).total == pytest.approx(e.total, abs=1e-4)
        # search score = model score for the 1-best; an n-best entry through a recombination arc may differ when the
        # model has lexicalized reordering (Moses' recombination: test_decode_beam's paper-mode test says why). The
        # small model's eflomal alignment is seeded from /dev/urandom, so which entries do differs between sessions.
        assert r.entries[0].search_score == pytest.approx(r.entries[0].total, abs=1e-3)


def test_stack_configurations(model, dev) -> None:
    """The Moses2 paper's stack configurations (Figs 4-5) group hypotheses differently in the cube, so they differ
    under a pop limit; searched exhaustively (no pop limit, stack size or beam reached) all three find the normal
    search's exhaustive optimum on short verses (exact recombination: with Moses' lossy one an exhaustive search
    keeps, per state, whichever hypothesis scored best so far, and a tie broken otherwise could end elsewhere);
    with pruning, outputs rescore."""
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.normal import NormalDecoder
    lines = dev
    short = sorted((x for x in lines if x.split()), key=lambda x: len(x.split()))[:4]
    exact = NormalDecoder(model, stack_size=10**6, beam_threshold=0, recombine_forward=True)
    opt = [exact.translate(x).best.total for x in short]
    for stacks in ("coverage-end", "coverage", "cardinality"):
        dec = CubeDecoder(model, pop_limit=10**6, stack_size=10**6, beam_threshold=0, stacks=stacks,
                          recombine_forward=True)
        assert [dec.translate(x).best.total for x in short] == pytest.approx(opt, abs=1e-9), stacks
    src = lines[:5]
    scorer = DerivationScorer(model.config, src)
    for stacks in ("coverage", "cardinality"):
        dec = CubeDecoder(model, pop_limit=200, stack_size=20, stacks=stacks)
        for sid, x in enumerate(src):
            b = dec.translate(x).best
            assert scorer.score(sid, parse_segmentation(b.segmentation)).total == pytest.approx(b.total, abs=1e-4)
    with pytest.raises(ValueError, match="--stacks"):
        CubeDecoder(model, stacks="bogus")
    with pytest.raises(ValueError, match="not with --stacks cardinality"):
        CubeDecoder(model, stacks="cardinality", queues="coverage")


def test_queue_exact(model, dev) -> None:
    """The thesis' future-work variant: items through the automaton queue before they enter the item queue. With
    rounds of one pop it is Moses2's search to the bit (same scores, same order); with longer rounds the pop order
    shifts, and every output still rescores."""
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    src = dev[:6]
    off = CubeDecoder(model, pop_limit=100, stack_size=100, nbest=3)
    ref = [off.translate(line) for line in src]
    one = CubeDecoder(model, pop_limit=100, stack_size=100, nbest=3, lm_pipeline="queue-exact", queue_size=1)
    for line, r in zip(src, ref):
        assert [(e.text, e.total) for e in one.translate(line).entries] == [(e.text, e.total) for e in r.entries]
    scorer = DerivationScorer(model.config, src)
    for q in (4, 16):
        dec = CubeDecoder(model, pop_limit=100, stack_size=100, lm_pipeline="queue-exact", queue_size=q)
        for sid, line in enumerate(src):
            b = dec.translate(line).best
            assert scorer.score(sid, parse_segmentation(b.segmentation)).total == pytest.approx(b.total, abs=1e-4)


def test_queue_configurations(model, dev) -> None:
    """Finer item queues (per destination coverage, and end) pop more and so never score worse on these verses;
    every output rescores."""
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    src = dev[:4]
    scorer = DerivationScorer(model.config, src)
    means = {}
    for queues in ("cardinality", "coverage", "coverage-end"):
        dec = CubeDecoder(model, pop_limit=50, stack_size=50, queues=queues)
        bests = [dec.translate(x).best for x in src]
        for sid, b in enumerate(bests):
            assert scorer.score(sid, parse_segmentation(b.segmentation)).total == pytest.approx(b.total, abs=1e-4)
        means[queues] = sum(b.total for b in bests) / len(bests)
    assert means["coverage"] >= means["cardinality"] - 1e-6
    with pytest.raises(ValueError, match="--queues"):
        CubeDecoder(model, queues="bogus")


def test_cube_configs_bench_and_report(tmp_path, capsys, small_trained) -> None:
    """`bench cube-configs` (the Moses2 paper's Tables 4-5) end to end on a few verses: one row per point, no
    output beats an exact reference, the report writes both tables, the figure and the metrics.

    What is guaranteed: a reference whose widest search pruned nothing (references_exact; exact recombination) is
    the optimum of the search space the cube search shares (same options, same distortion check), so nothing beats
    it. Two widths agreeing (references_confirmed) is no such guarantee, and the model is retrained per session by
    an aligner that cannot be seeded (tm/align.py): on one of 12 retrained models, with Moses' lossy recombination
    (the reference's before), a 15-word verse's reference lost the optimum at every width, 200 to 20000 unpruned,
    and two Table-5 points found it. Hence a widest width that searches these short verses exhaustively (~2 s)."""
    import json

    from smtbench.cli import main
    ini, _, ref = small_trained
    ini, src, ref = str(ini), str(ini.parent.parent / "dev.es"), str(ref)
    rows = tmp_path / "rows.jsonl"
    assert main(["bench", "cube-configs", "-f", ini, "--input", src,
                 "--reference", ref, "--sentences", "3", "--pop-limits", "20,50",
                 "--queue-pop-limit", "20", "--short-words", "12", "--reference-widths", "200,100000",
                 "--max-retakes", "0", "--out", str(rows)]) == 0
    got = [json.loads(x) for x in rows.read_text().splitlines()]
    assert len(got) == 2 * 3 + 3
    # short verses: the tokenized dev text only (no aligner); a pruned search may beat only an inexact reference
    assert all(r["short_sentences"] > 0 and r["references_exact"] > 0 and r["beat_exact_reference"] == 0
               and r["beat_reference"] <= r["short_sentences"] - r["references_exact"] for r in got)
    assert main(["report", "moses2-search", "--rows", str(rows), "--table4", str(tmp_path / "t4"),
                 "--table5", str(tmp_path / "t5"), "--figure", str(tmp_path / "f6.png"),
                 "--metrics", str(tmp_path / "m.csv")]) == 0
    assert (tmp_path / "t4.md").exists() and (tmp_path / "t5.csv").exists() and (tmp_path / "f6.png").exists()
    assert main(["bench", "cube-configs", "-f", ini, "--input", src,
                 "--reference", ref, "--stacks", "bogus", "--out", str(tmp_path / "x")]) != 0
    assert "--stacks: unknown bogus" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
