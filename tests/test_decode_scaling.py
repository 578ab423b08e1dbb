"""The Moses2 paper's scalability machinery (csrc/pb/threads.c, pb/search.c workspaces, pb/bin_read.c): every thread
count, pinning, pool setting, binarized-table cache size, compression and reordering storage gives exactly the output of
the single-threaded text-table decoder (n-best texts, feature values and scores, bit for bit)."""
from __future__ import annotations

import itertools

import pytest

from conftest import HAVE_ORACLE, ORACLE

N = 24


@pytest.fixture(scope="module", params=["small", "oracle"])
def bundle(request):
    """(model, its folder, phrase table, reordering table, source lines): the small model the tests train (every
    clone) and the oracle's dev model (where ../shared is present)."""
    if request.param == "small":
        ini, dev, _ = request.getfixturevalue("small_trained")
        d = ini.parent
        return (request.getfixturevalue("small_model"), d, d / "phrase-table.gz",
                d / "reordering-table.wbe-msd-bidirectional-fe.gz", dev)
    if not HAVE_ORACLE:
        pytest.skip("Moses oracle not present")
    return (request.getfixturevalue("oracle_model"), ORACLE, ORACLE / "phrase-table.dev.gz",
            ORACLE / "reordering-table.dev.gz", request.getfixturevalue("oracle_dev"))


def _in(folder, fn):
    """Run fn from the model's folder (its moses.ini's relative paths resolve there, as Moses resolves them)."""
    import os
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        return fn()
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def model(bundle):
    return bundle[0]


@pytest.fixture(scope="module")
def src(bundle):
    return bundle[4][:N]


def _key(tr):
    return [(e.text, e.segmentation, tuple(e.features), e.total, e.search_score) for e in tr.entries]


@pytest.fixture(scope="module")
def reference(model, src):
    from smtbench.decode.cube import CubeDecoder
    dec = CubeDecoder(model, pop_limit=100, stack_size=100, nbest=3)
    return [_key(dec.translate(line)) for line in src]


def test_threads_pools_and_pinning_give_identical_output(model, src, reference) -> None:
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.threads import ThreadedCubeDecoder
    cube = CubeDecoder(model, pop_limit=100, stack_size=100, nbest=3)
    for threads, pool, pin, window in [(1, True, False, 0), (2, True, True, 1), (3, False, False, 2),
                                       (4, True, True, 0), (2, False, True, 5)]:
        dec = ThreadedCubeDecoder(cube, threads=threads, pool=pool, pin=pin, pin_offset=1, pin_increment=1,
                                  window=window)
        got = [_key(tr) for _, tr in dec.translate_many(src)]
        assert got == reference, (threads, pool, pin, window)
        dec.close()


@pytest.mark.parametrize("search", ["normal", "beam"])
def test_threads_run_normal_and_beam_identically(model, src, search) -> None:
    """csrc/pb/threads.c runs any search: normal and beam on 2 threads (pooled or not, with the profile on) give
    the single-threaded entries and counters."""
    from smtbench.decode.beam import BeamDecoder
    from smtbench.decode.normal import NormalDecoder
    from smtbench.decode.threads import PHASES, ThreadedDecoder
    dec = (NormalDecoder(model, stack_size=50, nbest=3) if search == "normal" else
           BeamDecoder(model, variant="de+ep", beam_limit=20, nbest=3))
    one = [dec.translate(line) for line in src]
    for pool, profile_us in [(True, 50), (False, 0)]:
        th = ThreadedDecoder(dec, threads=2, pool=pool, profile_us=profile_us)
        got = [tr for _, tr in th.translate_many(src)]
        assert [_key(tr) for tr in got] == [_key(tr) for tr in one], (search, pool)
        assert [tr.counters for tr in got] == [tr.counters for tr in one], (search, pool)
        assert set(th.profile()) == set(PHASES)
        th.close()


def test_streaming_holds_only_the_window(model, src) -> None:
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.threads import ThreadedCubeDecoder
    consumed = 0

    def lines():
        nonlocal consumed
        for line in itertools.cycle(src):
            consumed += 1
            yield line

    dec = ThreadedCubeDecoder(CubeDecoder(model, pop_limit=20, stack_size=20), threads=2, window=3)
    stream = dec.translate_many(lines())
    for _ in range(5):
        next(stream)
    assert consumed <= 5 + 3 + 1
    stream.close()
    dec.close()


def test_profile_counts_components_and_keeps_output(model, src, reference) -> None:
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.threads import PHASES, ThreadedCubeDecoder
    dec = ThreadedCubeDecoder(CubeDecoder(model, pop_limit=100, stack_size=100, nbest=3), threads=2, profile_us=50)
    got = [_key(tr) for _, tr in dec.translate_many(src)]
    assert got == reference
    prof = dec.profile()
    assert set(prof) == set(PHASES)
    assert prof["lm"] > 0 and prof["search"] > 0
    dec.close()


@pytest.fixture(scope="module")
def tables(tmp_path_factory, bundle):
    import gzip

    from smtbench.tm.binarize import build
    _, _, pt, rt, _ = bundle
    d = tmp_path_factory.mktemp("bin")
    with gzip.open(pt, "rt", encoding="utf-8") as fh:
        pairs = sum(1 for _ in fh)
    out = {}
    for ro, comp in [("integrated", True), ("integrated", False), ("separate", True), ("separate", False)]:
        path = d / f"{ro}-{int(comp)}.bin"
        info = build(pt, path, rt, ro, comp)
        assert info["phrase_pairs"] == pairs and info["reordering_attached"] == pairs
        out[(ro, comp)] = path
    return out


def test_binarized_table_gives_identical_output(tables, bundle, src, reference) -> None:
    from smtbench.decode.cube import CubeDecoder
    from smtbench.decode.model import PhraseModel
    from smtbench.decode.threads import ThreadedCubeDecoder
    lm = None
    for (ro, comp), path in tables.items():
        for cache in (0, 7, 1000, 10**9):
            m = _in(bundle[1], lambda: PhraseModel("moses.ini", binary=path, cache=cache, lm=lm))
            lm = m.lm
            dec = CubeDecoder(m, pop_limit=100, stack_size=100, nbest=3)
            got = [_key(dec.translate(line)) for line in src[:8]]
            assert got == reference[:8], (ro, comp, cache)
        th = ThreadedCubeDecoder(dec, threads=2)
        assert [_key(tr) for _, tr in th.translate_many(src)] == reference, (ro, comp)
        counts = th.table_counts()
        assert 0 < counts["cache_hits"] <= counts["lookups"]  # lookups include spans not in the table
        th.close()


def test_binarized_table_errors(tmp_path, bundle, model) -> None:
    from smtbench.decode.model import PhraseModel
    from smtbench.tm.binarize import BinaryTableError, build
    bad = tmp_path / "bad.pt"
    bad.write_text("a ||| b ||| 0.5 0.5 0.5 0.5\nc ||| d ||| 0.5 0.5\n")
    with pytest.raises(BinaryTableError, match=r"bad.pt:2: expected 4 scores"):
        build(bad, tmp_path / "x.bin")
    assert not (tmp_path / "x.bin").exists()
    good = tmp_path / "good.pt"
    good.write_text("a ||| b ||| 0.5 0.5 0.5 0.5\n")
    build(good, tmp_path / "nore.bin", reordering="none")
    with pytest.raises(BinaryTableError, match="without reordering"):
        _in(bundle[1], lambda: PhraseModel("moses.ini", binary=tmp_path / "nore.bin", lm=model.lm))
    (tmp_path / "junk.bin").write_bytes(b"\0" * 4096)
    with pytest.raises(BinaryTableError, match="not a binarized phrase table"):
        _in(bundle[1], lambda: PhraseModel("moses.ini", binary=tmp_path / "junk.bin", lm=model.lm))
