"""The phrase-based model and the normal stack search, checked live against Moses2's own outputs (the oracle)
and against the independent derivation scorer."""
from __future__ import annotations

import gzip
import lzma
import shutil
from pathlib import Path

import pytest

from conftest import HAVE_ORACLE, ORACLE

pytestmark = pytest.mark.skipif(not HAVE_ORACLE, reason="Moses oracle not present")
N = 12  # dev sentences decoded in the tests


@pytest.fixture(scope="module")
def dev(oracle_dev) -> list[str]:
    return oracle_dev


def test_model_counts(oracle_model) -> None:
    s = oracle_model.stats
    assert s.phrase_lines == 286_728 and s.reordering_lines == 286_728
    assert s.options_without_reordering == 0 and s.max_phrase_length == 7
    # table-limit 20 per source phrase
    assert s.options < s.phrase_lines and s.source_phrases * 20 >= s.options


def test_normal_search_matches_moses2(oracle_model, dev) -> None:
    from smtbench.decode.normal import NormalDecoder
    ref = (ORACLE / "m2-normal200.1best").read_text(encoding="utf-8").splitlines()
    scores = [float(x) for x in (ORACLE / "m2-normal200.1best-score").read_text().split()]
    dec = NormalDecoder(oracle_model, stack_size=200)
    for i in range(N):
        best = dec.translate(dev[i]).best
        assert best.text == ref[i].strip()
        assert best.total >= scores[i] - 1e-3
        assert best.total == pytest.approx(best.search_score, abs=1e-3)


def test_every_nbest_entry_rescores(oracle_model, dev) -> None:
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.nbest import printed_tolerance
    from smtbench.decode.normal import NormalDecoder
    dec = NormalDecoder(oracle_model, stack_size=50, nbest=7)
    scorer = DerivationScorer(oracle_model.config, dev[:3])
    for sid in range(3):
        tr = dec.translate(dev[sid])
        assert len(tr.entries) == 7
        for e in tr.entries:
            got = scorer.score(sid, parse_segmentation(e.segmentation))
            printed = dict(oracle_model.to_ini_order(e.features))
            for name, values in got.features.items():
                for a, b in zip(values, printed[name]):
                    assert abs(a - float(format(b, ".6g"))) <= printed_tolerance(b), (name, a, b)
            assert got.total == pytest.approx(e.total, abs=1e-4)


def test_derivation_scorer_reproduces_moses2(oracle_model, dev) -> None:
    """Moses2's 1-best segmentations, rescored independently, give the values of its n-best entry."""
    from smtbench.decode.derivation import DerivationScorer, parse_segmentation
    from smtbench.decode.nbest import printed_tolerance, read_nbest
    with lzma.open(ORACLE / "m2-cube400-segx.seg.xz", "rt", encoding="utf-8") as fh:
        segs = [next(fh).rstrip("\n") for _ in range(N)]
    firsts = {}
    with lzma.open(ORACLE / "m2-cube400-segx.nbest.xz", "rt", encoding="utf-8") as fh:
        for e in read_nbest(fh):
            if e.sid >= N:
                break
            firsts.setdefault(e.sid, e)
    scorer = DerivationScorer(oracle_model.config, dev[:N])
    for sid in range(N):
        got = scorer.score(sid, parse_segmentation(segs[sid]))
        entry = firsts[sid]
        for name, values in entry.features.items():
            for a, b in zip(got.features[name], values):
                assert abs(a - b) <= printed_tolerance(b), (sid, name, a, b)
        assert abs(got.total - entry.total) <= printed_tolerance(entry.total)


def test_edge_sentences(oracle_model, dev) -> None:
    from smtbench.decode.normal import NormalDecoder
    from smtbench.decode.search import InputError
    dec = NormalDecoder(oracle_model, stack_size=10)
    assert dec.translate("").best.text == ""
    tr = dec.translate("qqzx zzqy")
    best = tr.best
    assert best.text == "qqzx zzqy"
    assert dict(oracle_model.to_ini_order(best.features))["UnknownWordPenalty0"] == [-200.0]
    long = " ".join((dev[0] + " " + dev[1]).split()[:50] * 4)  # 200 words
    assert len(dec.translate(long).best.text.split()) > 100
    with pytest.raises(InputError, match="257 words"):
        dec.translate(" ".join(["y"] * 257), "in.txt:7")


def _tiny(tmp: Path, pt: str, rt: str) -> Path:
    shutil.copy(ORACLE / "moses.ini", tmp / "moses.ini")
    (tmp / "lm-en5.arpa.xz").symlink_to(ORACLE / "lm-en5.arpa.xz")
    with gzip.open(tmp / "phrase-table.dev.gz", "wt") as fh:
        fh.write(pt)
    with gzip.open(tmp / "reordering-table.dev.gz", "wt") as fh:
        fh.write(rt)
    return tmp / "moses.ini"


@pytest.mark.parametrize("pt, rt, match", [
    ("a ||| b ||| 0.5 0.5 0.5 0.5 ||| 0-0\nc ||| d ||| 0.5 0.5 0.5\n", "", r"phrase-table.dev.gz:2: expected 4 scores"),
    ("a ||| b ||| 0.5 0.5 -1 0.5\n", "", r"phrase-table.dev.gz:1: scores must be probabilities"),
    ("a b\n", "", r"phrase-table.dev.gz:1: expected 'source \|\|\| target"),
    ("a ||| b ||| 0.5 0.5 0.5 0.5\n", "a ||| b ||| 0.5 0.5 0.5 0.5 0.5\n", r"reordering-table.dev.gz:1: expected 6 scores"),
])
def test_malformed_tables(tmp_path: Path, pt: str, rt: str, match: str, oracle_model) -> None:
    from smtbench.decode.model import ModelFormatError, PhraseModel
    ini = _tiny(tmp_path, pt, rt)
    with pytest.raises(ModelFormatError, match=match):
        PhraseModel(ini, lm=oracle_model.lm)


def test_cli_normal_and_rescore(tmp_path: Path, dev) -> None:
    import json
    import subprocess
    import sys
    src = tmp_path / "in.es"
    src.write_text("\n".join(dev[:3] + [""]) + "\n", encoding="utf-8")
    out, nb = tmp_path / "out", tmp_path / "out.nbest"
    cmd = [sys.executable, "-m", "smtbench.cli", "decode", "normal", "-f", "moses.ini", "-s", "20", "-i", str(src),
           "-o", str(out), "--n-best", str(nb), "4", "--nbest-segmentation", "--no-progress"]
    r = subprocess.run(cmd, cwd=ORACLE, capture_output=True, text=True, check=True)
    counters = json.loads(r.stderr.strip().splitlines()[-1])
    assert counters["sentences"] == 4 and counters["created"] > 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 5 and lines[3] == ""
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "decode", "rescore", "-f", "moses.ini", "--source",
                        str(src), "--nbest", str(nb)], cwd=ORACLE, capture_output=True, text=True)
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["mismatched"] == 0 and rep["checked"] == 13  # 3 x 4 entries + the empty line's one
