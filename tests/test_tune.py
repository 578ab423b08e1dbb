"""Weight tuning (smtbench.tune): BLEU statistics against sacrebleu, the MERT envelope and line search against brute
force on tiny constructed cases, MERT/MIRA determinism, the n-best pool."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from smtbench.tune import mert, mira
from smtbench.tune.bleu import Reference, background_bleu, bleu, bleu_many
from smtbench.tune.pool import NbestPool, TuneDataError


def synthetic_pool(sentences: int = 40, hyps: int = 12, seed: int = 0, layout=(("A", 2), ("B", 2))) -> NbestPool:
    """Hypotheses that are noisy copies of their reference; feature 0 tracks quality, the rest is noise."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(4)]
    pool = NbestPool([Reference([" ".join(rng.choice(vocab, 10))]) for _ in range(sentences)], layout)
    dim = sum(k for _, k in layout)
    for s in range(sentences):
        ref = pool.refs[s].counts and [g[0] for g in pool.refs[s].counts if len(g) == 1]
        for _ in range(hyps):
            words = [w if rng.random() < 0.6 else str(rng.choice(vocab)) for w in rng.choice(ref, 10)]
            words = words[: int(rng.integers(6, 11))]
            f = rng.normal(size=dim)
            f[0] += pool.refs[s].stats(" ".join(words))[0] / 5
            pool.add(s, " ".join(words), np.round(f, 3))
    return pool


def test_bleu_matches_sacrebleu() -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(5)]
    refs = [" ".join(rng.choice(vocab, int(rng.integers(3, 15)))) for _ in range(50)]
    hyps = [" ".join(rng.choice(vocab, int(rng.integers(3, 15)))) for _ in range(50)]
    total = np.sum([Reference([r]).stats(h) for r, h in zip(refs, hyps)], axis=0)
    ours = 100 * bleu(total)
    theirs = sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score
    assert ours == pytest.approx(theirs, abs=1e-9)
    assert bleu_many(total[None, :])[0] == pytest.approx(bleu(total), abs=1e-15)


def test_bleu_statistics_by_hand() -> None:
    ref = Reference(["the cat sat on the mat", "a cat sat"])
    # clipped by the largest count in any one reference: 'the' x2, 'cat' x1
    assert ref.stats("the the the cat") == [3, 4, 1, 3, 0, 2, 0, 1, 3]  # closest length 3 (|4-3| < |4-6|)
    assert ref.stats("the cat sat on") == [4, 4, 3, 3, 2, 2, 1, 1, 3]  # 4: 3 and 6 are 1 and 2 away
    assert Reference(["a b", "a b c d"]).stats("a b c") == [3, 3, 2, 2, 1, 1, 0, 0, 2]  # tie: the shorter
    assert ref.stats("the  cat") == ref.stats("the cat")  # blanks collapse
    assert bleu([3, 4, 1, 3, 0, 2, 0, 1, 3]) == 0.0
    assert background_bleu(np.zeros((1, 9)), np.ones(9))[0] == pytest.approx(1.0)


def test_envelopes_against_brute_force() -> None:
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 9, 60)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.uint64)
    n = int(offsets[-1])
    slope = rng.integers(-3, 4, n).astype(float)  # many equal slopes
    intercept = rng.integers(-5, 6, n).astype(float)
    x, idx, counts = mert.envelopes(offsets, slope, intercept)
    x2, idx2, counts2 = mert.envelopes(offsets, slope, intercept, mert.slope_order(offsets, slope))
    assert np.array_equal(counts, counts2)
    for g in range(len(sizes)):
        lo = int(offsets[g])
        assert np.array_equal(x[lo:lo + counts[g]], x2[lo:lo + counts[g]])
        assert np.array_equal(idx[lo:lo + counts[g]], idx2[lo:lo + counts[g]])
    for g in range(len(sizes)):
        lo, hi = int(offsets[g]), int(offsets[g + 1])
        seg_x, seg_i = x[lo:lo + counts[g]], idx[lo:lo + counts[g]]
        assert np.all(np.diff(seg_x[1:]) > 0)
        probes = np.concatenate([[-1e6, 1e6], rng.uniform(-10, 10, 200)])
        for p in probes:
            y = slope[lo:hi] * p + intercept[lo:hi]
            k = np.searchsorted(seg_x, p, side="right") - 1
            if np.any(np.isclose(seg_x, p)):
                continue
            assert y[seg_i[k] - lo] == pytest.approx(y.max())


def _brute_force_line(pool: NbestPool, origin: np.ndarray, direction: np.ndarray) -> float:
    """Best BLEU along the line: every pairwise intersection of two hypotheses of one sentence is a candidate
    breakpoint; BLEU is constant between them, so probing every gap (and beyond both ends) finds the maximum."""
    feats, stats, offsets = pool.arrays()
    m, b = feats @ direction, feats @ origin
    xs = []
    for s in range(pool.sentences):
        lo, hi = int(offsets[s]), int(offsets[s + 1])
        for i, j in itertools.combinations(range(lo, hi), 2):
            if m[i] != m[j]:
                xs.append((b[j] - b[i]) / (m[i] - m[j]))
    xs = np.unique(xs)
    probes = np.concatenate([[xs[0] - 1.0, xs[-1] + 1.0], (xs[1:] + xs[:-1]) / 2])
    return max(mert.score_at(pool, origin + p * direction) for p in probes)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_line_search_is_exact(seed: int) -> None:
    pool = synthetic_pool(sentences=6, hyps=5, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        origin, direction = rng.normal(size=pool.dim), rng.normal(size=pool.dim)
        x, score = mert.line_search(pool, origin, direction)
        assert score > 0 and score == pytest.approx(_brute_force_line(pool, origin, direction), abs=1e-12)
        assert mert.score_at(pool, origin + x * direction) == pytest.approx(score, abs=1e-12)


def test_one_bests_first_of_equals() -> None:
    feats = np.array([[1.0], [3.0], [3.0], [2.0], [-1.0]])
    offsets = np.array([0, 3, 5], dtype=np.uint64)
    assert list(mert.one_bests(feats, offsets, np.array([1.0]))) == [1, 3]


def test_mert_improves_and_is_deterministic() -> None:
    pool = synthetic_pool()
    start = np.array([0.0, 1.0, 1.0, 1.0])
    a = mert.mert(pool, [start], np.random.default_rng(7), restarts=3)
    b = mert.mert(pool, [start], np.random.default_rng(7), restarts=3)
    assert np.array_equal(a.weights, b.weights) and a.bleu == b.bleu
    assert a.bleu > a.start_bleu
    assert np.abs(a.weights).sum() == pytest.approx(1.0)
    assert mert.score_at(pool, a.weights) == pytest.approx(a.bleu)


def test_kbmira_improves_and_is_deterministic() -> None:
    pool = synthetic_pool()
    start = np.array([0.0, 0.3, 0.3, 0.3])
    a = mira.kbmira(pool, start, np.random.default_rng(7), epochs=10)
    b = mira.kbmira(pool, start, np.random.default_rng(7), epochs=10)
    assert np.array_equal(a.weights, b.weights) and a.bleu == b.bleu
    assert a.bleu > a.start_bleu and a.updates > 0
    assert mert.score_at(pool, a.weights) == pytest.approx(a.bleu)


def test_pool_reads_nbest_and_dedups(tmp_path) -> None:
    p = tmp_path / "nb"
    p.write_text("0 ||| a b ||| UnknownWordPenalty0= 0 A= 1 2 B= 3 ||| 1\n"
                 "0 ||| a b ||| UnknownWordPenalty0= 0 A= 1 2 B= 3 ||| 1\n"
                 "0 ||| a b ||| UnknownWordPenalty0= 0 A= 1 2 B= 4 ||| 1\n"
                 "1 ||| c ||| UnknownWordPenalty0= -100 A= 0 0 B= 0 ||| 1\n")
    pool = NbestPool([Reference(["a b"]), Reference(["c"])], [("A", 2), ("B", 1)])
    assert pool.add_nbest(p) == (4, 3)
    feats, stats, offsets = pool.arrays()
    assert feats.tolist() == [[1, 2, 3], [1, 2, 4], [0, 0, 0]] and list(offsets) == [0, 2, 3]
    assert stats[0].tolist() == [2, 2, 1, 1, 0, 0, 0, 0, 2]
    bad = tmp_path / "bad"
    bad.write_text("0 ||| a ||| A= 1 2 ||| 1\n")
    with pytest.raises(TuneDataError, match=r"bad:1: no values for feature B"):
        pool.add_nbest(bad)
    bad.write_text("5 ||| a ||| A= 1 2 B= 1 ||| 1\n")
    with pytest.raises(TuneDataError, match=r"bad:1: sentence id 5"):
        pool.add_nbest(bad)


TOY_INI = """\
# a toy model for the tuning loop
[input-factors]
0
[mapping]
0 T 0
[distortion-limit]
6
[feature]
UnknownWordPenalty
WordPenalty
PhrasePenalty
PhraseDictionaryMemory name=TranslationModel0 num-features=4 path=pt.gz input-factor=0 output-factor=0
Distortion
KENLM name=LM0 factor=0 path=lm.arpa order=1
[weight]
# keep this comment
UnknownWordPenalty0= 1
WordPenalty0= -1
PhrasePenalty0= 0.2
TranslationModel0= 0.2 0.2 0.2 0.2
Distortion0= 0.3
LM0= 0.5
"""


def _toy_tuning_model(tmp) -> tuple:
    import gzip

    with gzip.open(tmp / "pt.gz", "wt") as fh:
        fh.write("a ||| x ||| 0.6 0.6 0.6 0.6 ||| 0-0 ||| 1 1 1\n"
                 "a ||| y ||| 0.4 0.3 0.2 0.4 ||| 0-0 ||| 1 1 1\n"
                 "b ||| z ||| 0.5 0.5 0.5 0.5 ||| 0-0 ||| 1 1 1\n"
                 "b ||| z z ||| 0.5 0.4 0.5 0.4 ||| 0-0 ||| 1 1 1\n"
                 "a b ||| y z ||| 0.3 0.3 0.3 0.3 ||| 0-0 1-1 ||| 1 1 1\n")
    # its own LM, not TOY_ARPA: the words are this phrase table's targets (x, y, z)
    (tmp / "lm.arpa").write_text("\\data\\\nngram 1=6\n\n\\1-grams:\n-1\t<s>\n-1\t</s>\n-0.5\tx\n-0.6\ty\n"
                                 "-0.7\tz\n-2\t<unk>\n\n\\end\\\n")
    (tmp / "moses.ini").write_text(TOY_INI)
    (tmp / "dev.src").write_text("a b\nb a\na\nb b a\n")
    (tmp / "dev.ref").write_text("y z\nz z y\ny\nz z y\n")
    return tmp / "moses.ini", tmp / "dev.src", tmp / "dev.ref"


@pytest.mark.parametrize("optimizer", ["mert", "mira"])
def test_tune_loop_resumes_and_keeps_layout(tmp_path, optimizer: str) -> None:
    from smtbench.cli import main
    from smtbench.decode.ini import load_ini

    ini, src, ref = _toy_tuning_model(tmp_path)
    out = tmp_path / "tuned.ini"
    args = ["tune", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--decoder", "cube",
            "--out", str(out), "--optimizer", optimizer, "--nbest", "5", "--max-iterations", "2",
            "--random-restarts", "2", "--mira-epochs", "3", "--no-progress", "--", "--pop-limit", "10"]
    assert main(args) == 0
    before, after = ini.read_text().splitlines(), out.read_text().splitlines()
    assert len(before) == len(after)
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert changed and all(a.split("=")[0] == b.split("=")[0] and "=" in a for a, b in changed)
    assert "UnknownWordPenalty0= 1" in after and "# keep this comment" in after
    tuned = load_ini(out)
    assert sum(abs(w) for f in tuned.features if f.name != "UnknownWordPenalty0" for w in f.weights) == \
        pytest.approx(1.0)
    work = tmp_path / "tuned.ini.work"
    stamp = (work / "run1.nbest.gz").stat().st_mtime_ns
    first = out.read_text()
    assert main(args) == 0  # resumed: nothing decoded again, the same answer
    assert (work / "run1.nbest.gz").stat().st_mtime_ns == stamp and out.read_text() == first
    assert main(args[:-2] + ["--seed", "9", "--", "--pop-limit", "10"]) == 2  # another run's work dir


def test_tune_rejects_decoder_io_options(tmp_path, capsys) -> None:
    from smtbench.cli import main

    ini, src, ref = _toy_tuning_model(tmp_path)
    assert main(["tune", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--out",
                 str(tmp_path / "o.ini"), "--", "-o", "x"]) == 2
    assert "decoder option -o: set by `smtbench tune` itself" in capsys.readouterr().err


def test_tune_eval_row(tmp_path) -> None:
    import json

    from smtbench.cli import main

    ini, src, ref = _toy_tuning_model(tmp_path)
    out = tmp_path / "row.json"
    assert main(["tune-eval", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--sentences", "3",
                 "--label", "default", "--output", str(tmp_path / "hyp"), "--out", str(out), "--",
                 "--pop-limit", "10"]) == 0
    row = json.loads(out.read_text())
    import sacrebleu

    hyps = (tmp_path / "hyp").read_text().splitlines()
    assert len(hyps) == 3 and row["sentences"] == 3 and row["label"] == "default"
    assert row["machine_cpu"] and row["machine_cores"] >= 1 and "machine_load1" in row  # as every row
    assert row["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [ref.read_text().splitlines()[:3]],
                                                              tokenize="none", force=True).score, abs=1e-4)


def test_report_tables_from_a_toy_run(tmp_path) -> None:
    from smtbench.cli import main

    ini, src, ref = _toy_tuning_model(tmp_path)
    raw = tmp_path / "raw"
    assert main(["tune", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--out", str(tmp_path / "t.ini"),
                 "--nbest", "5", "--nbest-factor", "2", "--max-iterations", "2", "--random-restarts", "1",
                 "--summary", str(raw / "mert.iterations.jsonl"), "--no-progress", "--", "--pop-limit", "10"]) == 0
    evals = []
    for label, path in (("default", ini), ("mert", tmp_path / "t.ini")):
        out = raw / f"{label}.dev.json"
        assert main(["tune-eval", "-f", str(path), "--input", str(src), "--reference", str(ref), "--label", label,
                     "--out", str(out), "--", "--pop-limit", "10"]) == 0
        evals.append(f"dev={out}")
    assert main(["report", "tune", "--evals", *evals, "--iterations", str(raw / "mert.iterations.jsonl"),
                 "--tables", str(tmp_path / "tables")]) == 0
    bleu = (tmp_path / "tables" / "tune_bleu.md").read_text()
    assert "| default " in bleu and "| mert " in bleu and "dev_gain" in bleu
    assert (tmp_path / "tables" / "tune_iterations.csv").read_text().count("\n") == 3  # header + 2 runs
    import json
    its = [json.loads(x) for x in (raw / "mert.iterations.jsonl").read_text().splitlines()]
    assert all(r["machine_cpu"] and "machine_git_sha" in r for r in its)  # every row records the machine


def test_tuned_ini_elsewhere_still_loads(tmp_path, monkeypatch) -> None:
    from smtbench.decode.ini import load_ini
    from smtbench.tune.loop import write_ini

    ini, _, _ = _toy_tuning_model(tmp_path)
    monkeypatch.chdir("/")  # the relative paths resolve only beside the input ini
    out = tmp_path / "sub" / "tuned.ini"
    write_ini(ini, {"LM0": [0.25]}, out)
    cfg = load_ini(out)
    assert cfg.feature("KENLM").weights == [0.25] and cfg.feature("KENLM").path.resolve() == tmp_path / "lm.arpa"
    assert "path=../pt.gz" in out.read_text()


def test_reweight_takes_another_inis_weights_and_refuses_another_model(tmp_path, capsys) -> None:
    from smtbench.cli import main
    from smtbench.decode.ini import load_ini
    from smtbench.tune.loop import write_ini

    ini, _, _ = _toy_tuning_model(tmp_path)
    untuned = "# The default weights are NOT optimized for translation quality."  # as `tm model` writes it
    ini.write_text(ini.read_text().replace("[weight]\n", f"[weight]\n{untuned}\n"))
    tuned = tmp_path / "tune" / "tuned.ini"  # tuned elsewhere (its own folder), same features
    write_ini(ini, {"LM0": [0.25], "WordPenalty0": [-0.5]}, tuned)
    out = tmp_path / "model-tuned" / "moses.ini"
    assert main(["tm", "reweight", "-f", str(ini), "--weights", str(tuned), "--out", str(out)]) == 0
    got, want, base = load_ini(out), load_ini(tuned), load_ini(ini)
    assert got.weight_vector() == want.weight_vector() != base.weight_vector()
    assert [f.path and f.path.resolve() for f in got.features] == [f.path and f.path.resolve() for f in base.features]
    assert f"# Weights from {tuned} (smtbench tm reweight)." in out.read_text() and untuned not in out.read_text()
    other = tmp_path / "other.ini"
    other.write_text(ini.read_text().replace("Distortion\n", "").replace("Distortion0= 0.3\n", ""))
    assert main(["tm", "reweight", "-f", str(ini), "--weights", str(other), "--out", str(tmp_path / "x.ini")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "other.ini: its features differ" in err[0] and not (tmp_path / "x.ini").exists()


def test_moses_tuning_peer_failures_are_one_line(tmp_path, monkeypatch) -> None:
    """kbmira writes its weights only when an epoch's n-best BLEU rises above 0 (kbmira.cpp): no file is a
    PeerFailed of one line (the CLI prints it, exit 2), not a FileNotFoundError of a temporary path; a failed
    program's error is its last line; a cosine against all-zero weights is nan, not a warning."""
    import numpy as np

    from smtbench.errors import CliError
    from smtbench.tune import moses

    monkeypatch.setattr(moses.moses_peer, "program", lambda name: name)
    monkeypatch.setattr(moses, "_run", lambda cmd, cwd=None: "1/4 updates, avg loss = 15.4, BLEU = 0\nBest BLEU = 0\n")
    with pytest.raises(CliError, match=r"^kbmira: wrote no weights: .*\(its last line: Best BLEU = 0\)$"):
        moses.kbmira(["f"], ["s"], {"LM0": [0.5]}, seed=1)

    class Proc:
        returncode, stderr = 1, "reading\nERROR: bad feature file\n"
    monkeypatch.undo()
    monkeypatch.setattr(moses.procs, "run", lambda *a, **k: Proc())
    with pytest.raises(CliError, match=r"^mert failed \(exit 1\): ERROR: bad feature file$"):
        moses._run(["/x/mert"])
    assert np.isnan(moses.cosine(np.zeros(3), np.ones(3)))
    assert moses.cosine(np.array([1.0, -1.0]), np.array([2.0, -2.0])) == pytest.approx(1.0)
