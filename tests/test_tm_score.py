"""The C phrase scorer (Mediani §3.1) against the pandas oracle, computed live on real corpus lines."""
from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from smtbench.tm import score as S
from smtbench.tm.distributed import partition_extract



@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """400 verses, tokenized; a synthetic monotone alignment with some unaligned words; extract + lex."""
    from toy_models import aligned_corpus
    return aligned_corpus(tmp_path_factory.mktemp("tm"), 400, 7)


@pytest.fixture(scope="module")
def oracle(corpus):
    return S.score_pandas(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(corpus / "lex.e2f"))


def native(corpus, out, **kw):
    return S.score_native(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(corpus / "lex.e2f"), str(out), **kw)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("memory", [1 << 20, 3 << 20, 256 << 20])
def test_equals_oracle(corpus, oracle, tmp_path, threads, memory):
    out = tmp_path / "pt.gz"
    st = native(corpus, out, threads=threads, memory=memory)
    if memory == 1 << 20:
        assert st.runs1 > threads  # the budget really forced several runs
    S.compare_tables(S.read_table(str(out)), oracle)


def test_runs_kept_in_memory_or_written(corpus, tmp_path):
    """A load that wrote no run keeps its sorted buffers as the step-1 runs (none written) where they fit in 3/4 of
    the budget, and writes them (one run a thread) where they do not; the table is the same bytes either way, and
    the same as with runs a small budget forced."""
    big = native(corpus, tmp_path / "a.gz", threads=1, memory=256 << 20)
    assert big.runs1 == 0 and big.lines > 10_000
    tight = native(corpus, tmp_path / "b.gz", threads=1, memory=big.lines * 48 + 4096)  # (48: a step-1 record)
    assert tight.runs1 == 1
    small = native(corpus, tmp_path / "c.gz", threads=2, memory=1 << 20)
    assert small.runs1 > 2
    a, b, c = (gzip.open(tmp_path / f"{x}.gz").read() for x in "abc")
    assert a == b == c


def test_kneser_ney_equals_oracle(corpus, tmp_path):
    out = tmp_path / "kn.gz"
    native(corpus, out, threads=2, memory=1 << 20, smoothing="kn")
    ref = S.score_pandas(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(corpus / "lex.e2f"), smoothing="kn")
    S.compare_tables(S.read_table(str(out)), ref)


def test_distributed_equals_oracle(corpus, oracle, tmp_path):
    parts = partition_extract(str(corpus / "extract.gz"), 3, str(tmp_path))
    counts = []
    for k, p in enumerate(parts):
        c = tmp_path / f"part{k}.counts.gz"
        S.score_native(p, str(corpus / "lex.f2e"), str(corpus / "lex.e2f"), str(c), threads=2, memory=1 << 20,
                       counts_only=True)
        counts.append(str(c))
    out = tmp_path / "pt.gz"
    S.score_native(counts, str(corpus / "lex.f2e"), str(corpus / "lex.e2f"), str(out), threads=2,
                   memory=1 << 20, weighted=True)
    S.compare_tables(S.read_table(str(out)), oracle)


def test_sort_pipeline_equals_oracle(corpus, oracle, tmp_path):
    out = tmp_path / "sort.gz"
    S.score_sortpipe(str(corpus / "extract.gz"), str(corpus / "extract.inv.gz"), str(corpus / "lex.f2e"),
                     str(corpus / "lex.e2f"), str(out), memory=1 << 20)
    S.compare_tables(S.read_table(str(out)), oracle)


def test_every_scorer_weighs_a_missing_lex_pair_alike(corpus, oracle, tmp_path):
    """Word pairs absent from the lex table (LEX_MISSING, Moses' 1.0): the C scorer, the sort pipeline and the
    pandas oracle agree on thinned lex tables; as a missing pair weighs 1 (Moses' score: test_moses_baselines checks
    it live), no lexical weight falls below the full table's and many rise."""
    assert S.LEX_MISSING == 1.0
    from toy_models import thin_lex
    lex = tmp_path / "lex"
    lex.mkdir()
    thin_lex(corpus, lex)
    args = (str(lex / "lex.f2e"), str(lex / "lex.e2f"))
    thin = S.score_pandas(str(corpus / "extract.gz"), *args)
    out = tmp_path / "pt.gz"
    S.score_native(str(corpus / "extract.gz"), *args, str(out), threads=2, memory=1 << 20)
    S.compare_tables(S.read_table(str(out)), thin)
    sp = tmp_path / "sp.gz"
    S.score_sortpipe(str(corpus / "extract.gz"), str(corpus / "extract.inv.gz"), *args, str(sp), memory=1 << 20)
    S.compare_tables(S.read_table(str(sp)), thin)
    j = thin.merge(oracle, on=["src", "tgt"], suffixes=("", "_full"))
    assert len(j) == len(thin) == len(oracle)
    for col in ("lex_fe", "lex_ef"):
        assert (j[col] >= j[col + "_full"] * (1 - 1e-12)).all(), col
        assert (j[col] > j[col + "_full"] * 1.01).sum() > 100, col


def test_probabilities_sum_to_one_and_sorted(corpus, tmp_path):
    out = tmp_path / "pt.txt"
    native(corpus, out, threads=2, memory=1 << 20)
    t = S.read_table(str(out))
    sums = t.groupby("src")["p_ef"].sum().to_numpy()
    assert np.allclose(sums, 1.0, atol=1e-5 * t.groupby("src").size().max())
    assert np.allclose(t.groupby("tgt")["p_fe"].sum().to_numpy(), 1.0, atol=1e-4)
    lines = gzip.open(out).read().split(b"\n") if str(out).endswith(".gz") else out.read_bytes().split(b"\n")
    assert lines[-1] == b"" and lines[:-1] == sorted(lines[:-1])  # the order of LC_ALL=C sort (Moses' order)
    assert (t["c_ef"] <= t["c_f"]).all() and (t["c_ef"] <= t["c_e"]).all()


def test_exact_sums_in_oracle(oracle):
    # the oracle's unrounded probabilities: sum over targets of p(e|f) is 1 for every source
    assert np.allclose(oracle.groupby("src")["p_ef"].sum().to_numpy(), 1.0, atol=1e-12)


def write_bad(path: Path, good: list[str], bad: str, at: int) -> None:
    lines = good[:at - 1] + [bad] + good[at - 1:]
    with (gzip.open(path, "wt") if path.suffix == ".gz" else open(path, "w")) as fh:
        fh.write("\n".join(lines) + "\n")


@pytest.mark.parametrize("bad", ["a ||| b", "a ||| b ||| 0-x", "a ||| b ||| 3-0", " ||| b ||| 0-0",
                                 "a ||| b ||| 0-0 ||| 1 ||| 2", "zzzunknownword ||| b ||| 0-0",
                                 "a ||| b ||| 0-0\x00 1-1"])  # a NUL cutting the alignment short
@pytest.mark.parametrize("threads", [1, 2])
def test_malformed_extract_line_names_file_and_line(corpus, tmp_path, bad, threads):
    good = gzip.open(corpus / "extract.gz", "rt").read().splitlines()[:5000]
    bad = bad.replace(" b ", " the ") if "unknown" in bad else bad
    path = tmp_path / "bad.extract.gz"
    write_bad(path, good, bad, 3001)
    out = tmp_path / "pt.gz"
    with pytest.raises(S.PhraseFormatError, match=rf"bad\.extract\.gz:3001: "):
        S.score_native(str(path), str(corpus / "lex.f2e"), str(corpus / "lex.e2f"), str(out), threads=threads,
                       memory=1 << 20)
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left behind


def test_empty_lex_file_refused(corpus, tmp_path):
    """An empty lex file would turn every lexical weight into LEX_MISSING: refused by every scorer."""
    empty = tmp_path / "empty.e2f"
    empty.write_text("\n")
    with pytest.raises(S.PhraseFormatError, match=r"empty\.e2f: empty lex file"):
        S.score_native(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(empty), str(tmp_path / "o.gz"))
    with pytest.raises(S.PhraseFormatError, match=r"empty\.e2f: empty lex file"):
        S.score_pandas(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(empty))
    assert not (tmp_path / "o.gz").exists()


def test_malformed_lex_line_names_file_and_line(corpus, tmp_path):
    good = (corpus / "lex.e2f").read_text().splitlines()
    for bad, name in (("a b", "short"), ("a b 1.5", "range"), ("a b x", "nan")):
        path = tmp_path / f"{name}.e2f"
        write_bad(path, good, bad, 17)
        with pytest.raises(S.PhraseFormatError, match=rf"{name}\.e2f:17: "):
            S.score_native(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(path), str(tmp_path / "o.gz"))
        with pytest.raises(S.PhraseFormatError, match=rf"{name}\.e2f:17: "):
            S.score_pandas(str(corpus / "extract.gz"), str(corpus / "lex.f2e"), str(path))
    assert not (tmp_path / "o.gz").exists()


def test_cli_exit_status_and_message(corpus, tmp_path, capsys):
    from smtbench.cli import main
    path = tmp_path / "x.extract"
    path.write_text("a ||| b ||| 0-0\nbroken line\n")
    rc = main(["tm", "score", "--extract", str(path), "--lex-f2e", str(corpus / "lex.f2e"), "--lex-e2f",
               str(corpus / "lex.e2f"), "--out", str(tmp_path / "pt.gz"), "--memory", "4M"])
    assert rc == 2
    assert "x.extract:1:" in capsys.readouterr().err  # 'a' is not a corpus word: line 1 already fails


def test_interrupted_run_leaves_no_table(corpus, tmp_path):
    big = tmp_path / "big.extract"
    text = gzip.open(corpus / "extract.gz", "rt").read()
    with open(big, "w") as fh:
        for _ in range(40):
            fh.write(text)
    out = tmp_path / "pt.gz"
    cmd = [sys.executable, "-m", "smtbench.cli", "tm", "score", "--extract", str(big), "--lex-f2e",
           str(corpus / "lex.f2e"), "--lex-e2f", str(corpus / "lex.e2f"), "--out", str(out), "--memory", "2M",
           "--threads", "2"]
    for sig in (signal.SIGINT, signal.SIGKILL):
        proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
        # the signal goes in once the scorer has begun writing its sorted runs (a fixed sleep raced a fast machine:
        # the whole run took under a second there)
        deadline = time.monotonic() + 60
        while not any(d.is_dir() and any(d.iterdir()) for d in tmp_path.glob(".pscore.*")):
            assert proc.poll() is None, "the run finished before it could be interrupted"
            assert time.monotonic() < deadline, "no sorted run after a minute"
            time.sleep(0.005)
        proc.send_signal(sig)
        proc.wait(timeout=60)
        assert not out.exists()
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_alignment_ties_follow_moses(tmp_path):
    """Equally frequent alignments: Moses keeps the greater one as `score` stores it (a vector over target words of
    source-position sets), from each run's own side. `abatida ||| brought low`: 0-1 once, 0-0 0-1 once -> Moses
    prints 0-0 0-1 (the greater string would be 0-1). `a b ||| x y`: 0-1 once, 1-1 once -> the direct run (target E)
    keeps 1-1, the inverse run (target F) keeps 0-1, so lex(f|e) comes from 0-1."""
    import gzip
    ext = tmp_path / "extract.gz"
    inv = tmp_path / "extract.inv.gz"
    pairs = [("abatida", "brought low", "0-1"), ("abatida", "brought low", "0-0 0-1"),
             ("a b", "x y", "0-1"), ("a b", "x y", "1-1")]
    with gzip.open(ext, "wt") as fh:
        fh.writelines(f"{f} ||| {e} ||| {a}\n" for f, e, a in pairs)
    with gzip.open(inv, "wt") as fh:
        fh.writelines(f"{e} ||| {f} ||| {' '.join('-'.join(p.split('-')[::-1]) for p in a.split())}\n"
                      for f, e, a in pairs)
    words = [("abatida", "brought", 0.5), ("abatida", "low", 0.25), ("a", "y", 0.5), ("b", "y", 0.2),
             ("NULL", "x", 0.1), ("NULL", "brought", 0.3)]
    (tmp_path / "lex.f2e").write_text("".join(f"{e} {f} {w:.7f}\n" for f, e, w in words))
    inv_words = [("abatida", "brought", 0.4), ("abatida", "low", 0.6), ("a", "y", 0.7), ("b", "y", 0.3),
                 ("a", "NULL", 0.05), ("b", "NULL", 0.02)]
    (tmp_path / "lex.e2f").write_text("".join(f"{f} {e} {w:.7f}\n" for f, e, w in inv_words))
    lf2e, le2f = str(tmp_path / "lex.f2e"), str(tmp_path / "lex.e2f")
    ref = S.score_pandas(str(ext), lf2e, le2f).set_index(["src", "tgt"])
    assert ref.loc[("abatida", "brought low"), "align"] == "0-0 0-1"
    ab = ref.loc[("a b", "x y")]
    assert ab["align"] == "1-1"
    # lex(f|e) under 0-1 (inverse winner): a <- y (0.7), b unaligned -> w(b|NULL) = 0.02
    assert ab["lex_fe"] == pytest.approx(0.7 * 0.02)
    # lex(e|f) under 1-1 (direct winner): x unaligned -> w(x|NULL) 0.1, y <- b 0.2
    assert ab["lex_ef"] == pytest.approx(0.1 * 0.2)
    for name, run in {
        "native": lambda out: S.score_native(str(ext), lf2e, le2f, out, threads=2, memory=1 << 20),
        "sortpipe": lambda out: S.score_sortpipe(str(ext), str(inv), lf2e, le2f, out),
    }.items():
        out = str(tmp_path / f"{name}.gz")
        run(out)
        got = S.read_table(out).set_index(["src", "tgt"])
        for key in ref.index:
            assert got.loc[key, "align"] == ref.loc[key, "align"], (name, key)
            for col in ("lex_fe", "lex_ef"):
                assert got.loc[key, col] == pytest.approx(ref.loc[key, col], rel=1e-5), (name, key, col)


def test_scores_are_printed_as_printf_g6():
    """The scorer's fast %.6g (phrase_write.h sb_ps_put_g6: no log10/pow call a number) prints what printf prints
    (Python's '%.6g' is the same correctly rounded conversion): random probabilities and their powers, ratios of
    counts, exact ties (1/1024 = 0.0009765625: printf rounds to even), values just either side of a tie and of a
    power of ten (9.999995e-39 decides the exponent), the extremes."""
    import random

    from smtbench.native import ffi, lib
    buf = ffi.new("char[64]")

    def g6(v: float) -> str:
        lib.sb_ps_format_g6(v, buf, 64)
        return ffi.string(buf).decode()

    rng = random.Random(43)
    vals = [rng.random() ** rng.choice([1, 2, 5, 20, 60]) for _ in range(100_000)]
    vals += [x / y for x in range(1, 60) for y in range(x, 400)] + [1 / 2 ** k for k in range(1, 60)]
    for k in range(-40, 12):
        for d in (1, 9.999995, 9.9999949999, 9.99999500001, 1.000005, 0.5, 0.1234565, 0.1234575, 0.9999995):
            vals.append(d * 10.0 ** k)
    vals += [0.0, 1.0, 5e-324, 1e-300, 1.7976931348623157e308, 123456.5, 999999.5, 0.1]
    bad = [(v, g6(v), "%.6g" % v) for v in vals if g6(v) != "%.6g" % v]
    assert not bad, bad[:5]


def test_table_is_in_the_order_of_its_sorted_lines(tmp_path):
    """Moses' phrase table comes in `LC_ALL=C sort` order of its lines (score keeps its sorted extract's order,
    consolidate score's): a phrase is followed by ' ||| ' there, so '( dijo ||| ...' sorts before '( ||| ...' ('d'
    < '|') although '(' < '( dijo' as strings, and 'a ||| ...' before 'a~ ||| ...' and '\u00bf ||| ...'. Ours (the C
    scorer at 1 and 2 threads, in memory and through runs, and the pandas oracle) is in that order, checked against
    sort itself (live)."""
    fw = ["(", "dijo", "a", "a!", "ab", "a~", "|", "||", "|a", "}", "\u00bf", "z"]
    ew = ["for", "said", "x", "x!", "|", "\u00e9"]
    lines = []
    for f1 in fw:
        for f in ([f1] + [f"{f1} {f2}" for f2 in fw]):
            for j, e1 in enumerate(ew):
                for e in ([e1] + [f"{e1} {e2}" for e2 in ew[j % 2::2]]):
                    lines.append(f"{f} ||| {e} ||| 0-0\n")
    (tmp_path / "extract").write_text("".join(lines[::-1]), encoding="utf-8")
    (tmp_path / "lex.f2e").write_text("".join(f"{e} {f} 0.5\n" for f in fw for e in ew), encoding="utf-8")
    (tmp_path / "lex.e2f").write_text("".join(f"{f} {e} 0.5\n" for f in fw for e in ew), encoding="utf-8")
    env = dict(os.environ, LC_ALL="C")
    for threads, memory in ((1, 256 << 20), (2, 1 << 20)):
        out = tmp_path / f"pt{threads}"
        S.score_native(str(tmp_path / "extract"), str(tmp_path / "lex.f2e"), str(tmp_path / "lex.e2f"), str(out),
                       threads=threads, memory=memory)
        ours = out.read_bytes()
        assert ours.count(b"\n") == len(set(lines))
        assert ours == subprocess.run(["sort"], input=ours, capture_output=True, env=env, check=True).stdout
    assert (tmp_path / "pt1").read_bytes() == (tmp_path / "pt2").read_bytes()
    table = (tmp_path / "pt1").read_text(encoding="utf-8").split("\n")[:-1]
    starts = ("( dijo ||| ", "( ||| ", "a ||| ", "a~ ||| ")
    first = {p: next(i for i, x in enumerate(table) if x.startswith(p)) for p in starts}
    assert first["( dijo ||| "] < first["( ||| "] and first["a ||| "] < first["a~ ||| "]
    oracle = S.score_pandas(str(tmp_path / "extract"), str(tmp_path / "lex.f2e"), str(tmp_path / "lex.e2f"))
    assert [tuple(x.split(" ||| ")[:2]) for x in table] == list(zip(oracle["src"], oracle["tgt"]))
