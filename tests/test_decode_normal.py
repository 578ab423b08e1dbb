"""The phrase-based model and the normal stack search, on every clone: on the small model the tests train themselves
(tests/small_model.py) and, where ../shared holds it, on the oracle's model, checked against what needs no recorded
output - the model's own table files (its counts), the independent derivation scorer (decode/derivation.py: the
search's score of an output is the model score of its segmentation, every n-best entry rescored feature by feature),
invariants across search settings, and live Moses2 where it is built (build/moses/bin/moses2, `make moses-test`).
The oracle tier (Moses2's recorded outputs on the oracle's model: the same lines, the same scores) runs in addition
where the oracle is present."""
from __future__ import annotations

import json
import lzma
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import HAVE_ORACLE, ORACLE
from smtbench import moses_peer
from smtbench.ioutil import open_text, printed_tolerance

needs_oracle = pytest.mark.skipif(not HAVE_ORACLE, reason="Moses oracle not present (../shared or $SMTBENCH_SHARED)")
needs_moses2 = pytest.mark.skipif(not moses_peer.available("moses2"),
                                  reason=f"moses2 {moses_peer.NOT_BUILT} ({moses_peer.bin_dir()})")
N = 12  # dev sentences decoded in the tests


@pytest.fixture(scope="module")
def model(any_model):
    """The small model the tests train (every clone) and the oracle's (where present)."""
    return any_model[0]


@pytest.fixture(scope="module")
def dev(any_model) -> list[str]:
    return any_model[1]


@pytest.fixture(scope="module", params=["small", "oracle"])
def ini_and_dev(request) -> tuple[Path, list[str]]:
    """(moses.ini, source lines) of the same two models, for the command line."""
    if request.param == "small":
        ini, dev, _ = request.getfixturevalue("small_trained")
        return ini, dev
    if not HAVE_ORACLE:
        pytest.skip("Moses oracle not present")
    return ORACLE / "moses.ini", request.getfixturevalue("oracle_dev")


def _pairs(path: Path) -> list[tuple[str, str]]:
    """(source, target) of every line of a Moses table, words as the reader splits them."""
    with open_text(path) as fh:
        return [(" ".join(f[0].split()), " ".join(f[1].split())) for f in (line.split("|||") for line in fh)]


def test_model_counts(model) -> None:
    """The loader's counts are those of its table files, counted here line by line: lines, distinct source
    phrases, options kept under the table limit, the longest source phrase, reordering lines and the kept options
    without a reordering entry."""
    cfg = model.config
    tm = cfg.feature("PhraseDictionaryMemory")
    pt = _pairs(tm.path)
    per_source = Counter(src for src, _ in pt)
    limit = tm.table_limit or 0
    s = model.stats
    assert s.phrase_lines == len(pt) and s.source_phrases == len(per_source)
    assert s.options == sum(min(n, limit) if limit else n for n in per_source.values())
    assert s.max_phrase_length == max(len(src.split()) for src in per_source)
    ro_pairs = _pairs(cfg.feature("LexicalReordering").path)
    assert s.reordering_lines == len(ro_pairs)
    ro = set(ro_pairs)
    missing = sum(pair not in ro for pair in pt)
    assert s.options_without_reordering == 0 if missing == 0 else s.options_without_reordering <= missing


def test_search_score_is_the_model_score(model, dev) -> None:
    """The 1-best of every sentence: the search's own score equals the model score of its path, and the
    independent scorer gives that score to its segmentation."""
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.normal import NormalDecoder
    src = dev[:N]
    dec = NormalDecoder(model, stack_size=100)
    scorer = DerivationScorer(model.config, src)
    for sid, line in enumerate(src):
        best = dec.translate(line).best
        assert best.total == pytest.approx(best.search_score, abs=1e-3), sid
        assert scorer.score(sid, parse_segmentation(best.segmentation)).total == pytest.approx(best.total, abs=1e-4)


def test_every_nbest_entry_rescores(model, dev) -> None:
    """Every entry of a 7-best list, feature by feature (to the 6 digits the n-best list prints) and in total. The
    list comes in the order of the search's path estimate (Moses2's: the path's score, less the replaced node's,
    plus the recombined arc's), so the estimates never rise; the exact totals rise only where Moses2's
    recombination merged hypotheses whose next phrase's forward reordering scores differ (the estimate is then not
    the derivation's score): with exact recombination (recombine_forward) they never rise either."""
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.normal import NormalDecoder
    dec = NormalDecoder(model, stack_size=50, nbest=7)
    exact = NormalDecoder(model, stack_size=50, nbest=7, recombine_forward=True)
    scorer = DerivationScorer(model.config, dev[:3])
    for sid in range(3):
        tr = dec.translate(dev[sid])
        assert len(tr.entries) == 7
        assert [e.search_score for e in tr.entries] == sorted((e.search_score for e in tr.entries), reverse=True)
        totals = [e.total for e in exact.translate(dev[sid]).entries]
        assert totals == sorted(totals, reverse=True), sid
        for e in tr.entries:
            got = scorer.score(sid, parse_segmentation(e.segmentation))
            printed = dict(model.to_ini_order(e.features))
            for name, values in got.features.items():
                for a, b in zip(values, printed[name]):
                    assert abs(a - float(format(b, ".6g"))) <= printed_tolerance(b), (name, a, b)
            assert got.total == pytest.approx(e.total, abs=1e-4)


def test_search_settings(model, dev) -> None:
    """Invariants across settings on the shortest verses: the exhaustive search with exact recombination (no
    pruning, forward reordering scores kept apart) finds a score no other setting beats, and its output rescores;
    asking for an n-best list leaves the 1-best as it is."""
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.normal import NormalDecoder
    short = sorted((x for x in dev if x.split()), key=lambda x: len(x.split()))[:4]
    exact = NormalDecoder(model, stack_size=10**6, beam_threshold=0, recombine_forward=True)
    bests = [exact.translate(x).best for x in short]
    scorer = DerivationScorer(model.config, short)
    for sid, b in enumerate(bests):
        assert scorer.score(sid, parse_segmentation(b.segmentation)).total == pytest.approx(b.total, abs=1e-4)
    opt = [b.total for b in bests]
    settings = [dict(stack_size=10**6, beam_threshold=0), dict(stack_size=1), dict(stack_size=5),
                dict(stack_size=50), dict(stack_size=50, distortion_limit=0), dict(stack_size=50, beam_threshold=0.1)]
    for kw in settings:
        dec = NormalDecoder(model, **kw)
        got = [dec.translate(x).best.total for x in short]
        assert all(g <= o + 1e-9 for g, o in zip(got, opt)), (kw, got, opt)
    for kw in (dict(stack_size=5), dict(stack_size=100)):
        one, many = NormalDecoder(model, **kw), NormalDecoder(model, nbest=9, **kw)
        for line in dev[:4]:
            a, b = one.translate(line).best, many.translate(line).entries[0]
            assert (a.text, a.total) == (b.text, b.total), kw


def test_edge_sentences(model, dev) -> None:
    from smtbench.decode.normal import NormalDecoder
    from smtbench.decode.search import InputError
    dec = NormalDecoder(model, stack_size=10)
    assert dec.translate("").best.text == ""
    best = dec.translate("qqzx zzqy").best
    assert best.text == "qqzx zzqy"
    assert dict(model.to_ini_order(best.features))["UnknownWordPenalty0"] == [-200.0]
    words = " ".join(dev).split()
    long = " ".join((words * (1 + 200 // max(1, len(words))))[:200])
    assert len(dec.translate(long).best.text.split()) > 100
    with pytest.raises(InputError, match="257 words"):
        dec.translate(" ".join(["y"] * 257), "in.txt:7")


@pytest.mark.parametrize("pt, rt, match", [
    ("a ||| b ||| 0.5 0.5 0.5 0.5 ||| 0-0\nb ||| a ||| 0.5 0.5 0.5\n", "", r"pt.txt:2: expected 4 scores"),
    ("a ||| b ||| 0.5 0.5 -1 0.5\n", "", r"pt.txt:1: scores must be probabilities"),
    ("a b\n", "", r"pt.txt:1: expected 'source \|\|\| target"),
    ("a ||| b ||| 0.5 0.5 0.5 0.5\n", "a ||| b ||| 0.5 0.5 0.5 0.5 0.5\n", r"rt.txt:1: expected 6 scores"),
])
def test_malformed_tables(tmp_path: Path, pt: str, rt: str, match: str) -> None:
    from toy_models import toy_phrase_model

    from smtbench.decode.model import ModelFormatError, PhraseModel
    ini = toy_phrase_model(tmp_path)
    (tmp_path / "pt.txt").write_text(pt)
    (tmp_path / "rt.txt").write_text(rt)
    with pytest.raises(ModelFormatError, match=match):
        PhraseModel(ini)


def test_cli_normal_and_rescore(tmp_path: Path, ini_and_dev) -> None:
    ini, dev = ini_and_dev
    src = tmp_path / "in.es"
    src.write_text("\n".join(dev[:3] + [""]) + "\n", encoding="utf-8")
    out, nb = tmp_path / "out", tmp_path / "out.nbest"
    cmd = [sys.executable, "-m", "smtbench.cli", "decode", "normal", "-f", "moses.ini", "-s", "20", "-i", str(src),
           "-o", str(out), "--n-best", str(nb), "4", "--nbest-segmentation", "--no-progress"]
    r = subprocess.run(cmd, cwd=ini.parent, capture_output=True, text=True, check=True)
    counters = json.loads(r.stderr.strip().splitlines()[-1])
    assert counters["sentences"] == 4 and counters["created"] > 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 5 and lines[3] == ""
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "decode", "rescore", "-f", "moses.ini", "--source",
                        str(src), "--nbest", str(nb)], cwd=ini.parent, capture_output=True, text=True)
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["mismatched"] == 0 and rep["checked"] == 13  # 3 x 4 entries + the empty line's one


@needs_moses2
def test_normal_search_matches_live_moses2(tmp_path: Path, small_trained, small_model) -> None:
    """Moses2 (-search-algorithm 0) run here on the small model, pruned hard (3 hypotheses a stack, where a search
    that differs from Moses2's in any detail shows): our normal search gives its 1-best line and its score (to the 6
    digits it prints) on every sentence, and the independent scorer gives its segmentation the values of its n-best
    entry. A line that differs must tie Moses2's score at its printed precision (the peer identity rule).
    (tests/test_moses_peer.py compares the wide searches through the command line.)"""
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.nbest import read_nbest
    from smtbench.decode.normal import NormalDecoder
    ini, dev, _ = small_trained
    src = dev[:10]
    (tmp_path / "in.es").write_text("".join(x + "\n" for x in src), encoding="utf-8")
    scorer = DerivationScorer(small_model.config, src)
    for stack in (3,):
        nb = tmp_path / f"m2-{stack}.nbest"
        with open(tmp_path / "in.es", "rb") as fh:
            r = subprocess.run([str(moses_peer.program("moses2")), "-f", str(ini), "-v", "0", "-threads", "1",
                                "-search-algorithm", "0", "-s", str(stack), "-report-segmentation",
                                "-n-best-list", str(nb), "1"], stdin=fh, capture_output=True, cwd=ini.parent)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        segs = r.stdout.decode("utf-8").splitlines()
        firsts = {}
        with open(nb, encoding="utf-8") as fh:
            for e in read_nbest(fh, str(nb)):
                firsts.setdefault(e.sid, e)
        assert len(segs) == len(src) and sorted(firsts) == list(range(len(src)))
        dec = NormalDecoder(small_model, stack_size=stack)
        ours_higher = 0
        for sid, line in enumerate(src):
            seg = parse_segmentation(segs[sid])
            theirs = firsts[sid]
            assert " ".join(w for _, _, words in seg for w in words) == theirs.text
            best = dec.translate(line).best
            # the identity rule of decode.compare.peer_identity: the same line, another line whose score ties
            # Moses2's at its printed precision (two equal-scoring hypotheses are both the 1-best; which one a search
            # keeps follows its tie order), or ours higher -- at 3 hypotheses a stack, which of two hypotheses tied at
            # the cut survives decides the rest of the search (seen in CI on a retrained small model: sentence 3,
            # ours -442.700 vs Moses2 -443.116, its line without the closing quote). Ours higher must be a real
            # derivation: the independent scorer gives our segmentation our total. Moses2 higher fails.
            if abs(best.total - theirs.total) > printed_tolerance(theirs.total):
                assert best.total > theirs.total, (stack, sid, best.total, theirs.total, best.text, theirs.text)
                ours_higher += 1
                mine = scorer.score(sid, parse_segmentation(best.segmentation))
                assert abs(mine.total - best.total) <= 1e-6 * max(1.0, abs(best.total)), (stack, sid, mine.total)
            got = scorer.score(sid, seg)
            for name, values in theirs.features.items():
                for a, b in zip(got.features[name], values):
                    assert abs(a - b) <= printed_tolerance(b), (stack, sid, name, a, b)
            assert abs(got.total - theirs.total) <= printed_tolerance(theirs.total), (stack, sid)
        # a search difference, not a different search: most lines are Moses2's own
        assert ours_higher <= len(src) // 5, (stack, ours_higher)


# ---- the oracle tier: Moses2's recorded outputs on the oracle's model ------------------------------------------
@needs_oracle
def test_normal_search_matches_recorded_moses2(oracle_model, oracle_dev) -> None:
    from smtbench.decode.normal import NormalDecoder
    ref = (ORACLE / "m2-normal200.1best").read_text(encoding="utf-8").splitlines()
    scores = [float(x) for x in (ORACLE / "m2-normal200.1best-score").read_text().split()]
    dec = NormalDecoder(oracle_model, stack_size=200)
    for i in range(N):
        best = dec.translate(oracle_dev[i]).best
        assert best.text == ref[i].strip()
        assert best.total >= scores[i] - 1e-3
        assert best.total == pytest.approx(best.search_score, abs=1e-3)


@needs_oracle
def test_derivation_scorer_reproduces_recorded_moses2(oracle_model, oracle_dev) -> None:
    """Moses2's 1-best segmentations, rescored independently, give the values of its n-best entry."""
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.nbest import read_nbest
    with lzma.open(ORACLE / "m2-cube400-segx.seg.xz", "rt", encoding="utf-8") as fh:
        segs = [next(fh).rstrip("\n") for _ in range(N)]
    firsts = {}
    with lzma.open(ORACLE / "m2-cube400-segx.nbest.xz", "rt", encoding="utf-8") as fh:
        for e in read_nbest(fh):
            if e.sid >= N:
                break
            firsts.setdefault(e.sid, e)
    scorer = DerivationScorer(oracle_model.config, oracle_dev[:N])
    for sid in range(N):
        got = scorer.score(sid, parse_segmentation(segs[sid]))
        entry = firsts[sid]
        for name, values in entry.features.items():
            for a, b in zip(got.features[name], values):
                assert abs(a - b) <= printed_tolerance(b), (sid, name, a, b)
        assert abs(got.total - entry.total) <= printed_tolerance(entry.total)
