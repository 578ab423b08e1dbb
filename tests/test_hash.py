"""The linear-probing table against a Python dict, and every queue size against plain lookups."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smtbench.experiments.mokry_hash import HashSweep, run_sweep
from smtbench.hash.table import LAYOUTS, LINE_SLOTS, MAX_QUEUE, ProbingHashTable, plan

keys64 = st.integers(min_value=1, max_value=2**64 - 1)


@settings(max_examples=60, deadline=None)
@given(items=st.dictionaries(keys64, st.integers(0, 2**64 - 1), max_size=300),
       absent=st.lists(keys64, max_size=100),
       sizing=st.sampled_from(["pow2", "mod"]), queue=st.integers(0, MAX_QUEUE),
       layout=st.sampled_from(sorted(LAYOUTS)))
def test_matches_dict(items, absent, sizing, queue, layout):
    buckets = 512 if sizing == "pow2" else 504 if layout in LINE_SLOTS else 499  # -ovf: whole lines
    t = ProbingHashTable(buckets, sizing, layout)
    k = np.array(list(items), dtype=np.uint64)
    v = np.array(list(items.values()), dtype=np.uint64)
    # insert in two halves, with the second overwriting some values, as a dict would
    t.insert(k, v)
    t.insert(k[: len(k) // 2], v[: len(k) // 2] ^ np.uint64(1))
    expect = dict(items)
    for key in list(items)[: len(k) // 2]:
        expect[key] ^= 1
    assert len(t) == len(expect)
    queries = list(items) + absent
    values, found = t.find(np.array(queries, dtype=np.uint64), queue_size=queue)
    for q, val, f in zip(queries, values.tolist(), found.tolist()):
        assert f == (q in expect)
        assert val == (expect[q] if f and layout != "keys" else 0)  # layout 'keys' stores no values


def test_every_queue_size_agrees_with_plain():
    t, n = ProbingHashTable.for_bytes(1 << 20)
    t.fill_random(n, seed=3, threads=2)
    rng = np.random.default_rng(0)
    q = rng.integers(1, 2**63, size=5000, dtype=np.uint64)
    base = t.find(q, 0)
    for size in range(1, MAX_QUEUE + 1):
        v, f = t.find(q, size)
        assert np.array_equal(v, base[0]) and np.array_equal(f, base[1])


@pytest.mark.parametrize("mode", ["hit", "miss"])
def test_bench_checksums_identical_across_queues_threads_repeats(mode):
    rows = run_sweep(HashSweep(table_mib=2, queue_sizes=[0, 1, 3, 8, 16], threads=[1, 2], lookups=20000,
                               modes=[mode], repeats=2))
    rows = [r for r in rows if not r.get("retaken")]  # attempts retaken in a slow spell stay in the rows
    lookups = [r for r in rows if r["mode"] == mode]
    floor = [r for r in rows if r["mode"] == "line"]
    assert len(lookups) == 20 and len(floor) == 4  # the random-line floor: one per thread count and repeat
    assert len({r["checksum"] for r in lookups}) == 1 and len({r["checksum"] for r in floor}) == 1
    rows = lookups
    if mode == "hit":
        assert all(r["found"] == 20000 for r in rows)
    assert all(r["machine_cpu"] and r["machine_git_sha"] for r in rows)


@pytest.mark.parametrize("sizing", ["pow2", "mod"])
def test_layouts_agree(sizing):
    """Every layout (and huge pages on or off) finds the same keys with the same values and gives the same bench
    checksums; the line-aligned layouts touch no more cache lines per miss than Mokry's."""
    rows = run_sweep(HashSweep(table_mib=2, queue_sizes=[0, 4, 16], threads=[1, 2], lookups=20000,
                               modes=["hit", "miss"], repeats=1, sizing=sizing,
                               variants=["kv", "keys", "kv-line", "split", "split-pf", "split-ovf", "split-ovf-pf",
                                         "kv-line-ovf", "kv:nohuge", "split:nohuge", "split-ovf:nohuge"]))
    rows = [r for r in rows if not r.get("retaken")]  # attempts retaken in a slow spell stay in the rows
    for mode in ("hit", "miss"):
        got = [r for r in rows if r["mode"] == mode]
        assert len(got) == 11 * 3 * 2 and len({r["checksum"] for r in got}) == 1
    lines = {r["variant"]: r["mean_lines"] for r in rows if r["mode"] == "miss"}
    assert lines["kv-line"] <= lines["kv"] and lines["split"] <= lines["kv"]
    # the overflow mark stops misses at their line: fewer lines than without it
    assert lines["split-ovf"] < lines["split"] and lines["kv-line-ovf"] < lines["kv-line"]
    assert not any(r["huge_pages"] for r in rows if r["variant"].endswith(":nohuge"))
    rng = np.random.default_rng(5)
    keys = np.unique(rng.integers(1, 2**64 - 1, size=3000, dtype=np.uint64))
    probes = np.concatenate([keys, rng.integers(1, 2**64 - 1, size=1000, dtype=np.uint64)])
    found = None
    for layout in LAYOUTS:
        t, _ = ProbingHashTable.for_bytes(1 << 16, sizing=sizing, layout=layout)
        t.insert(keys, keys ^ np.uint64(7))
        v, f = t.find(probes, queue_size=8)
        found = f if found is None else found
        assert np.array_equal(f, found) and f[: len(keys)].all()
        if layout != "keys":
            assert np.array_equal(v[f], probes[f] ^ np.uint64(7))


def test_bad_variant():
    with pytest.raises(ValueError, match="LAYOUT"):
        HashSweep(table_mib=1, queue_sizes=[0], threads=[1], variants=["kv:huge"]).validate()
    with pytest.raises(ValueError, match="layout"):
        ProbingHashTable(16, layout="cuckoo")  # type: ignore[arg-type]


def test_fill_is_thread_count_independent():
    a, n = ProbingHashTable.for_bytes(1 << 20)
    b, _ = ProbingHashTable.for_bytes(1 << 20)
    a.fill_random(n, seed=9, threads=1)
    b.fill_random(n, seed=9, threads=2)
    r = [t.bench(fill_seed=9, filled=n, query_seed=1, lookups=10000, mode="hit", queue_size=4, threads=1)
         for t in (a, b)]
    assert r[0].checksum == r[1].checksum and r[0].found == 10000


@pytest.mark.parametrize("kwargs, message", [
    (dict(table_mib=1, queue_sizes=[0], threads=[1], load_factor=1.0), "load factor"),
    (dict(table_mib=1, queue_sizes=[0], threads=[1], load_factor=0.0), "load factor"),
    (dict(table_mib=0, queue_sizes=[0], threads=[1]), "table-mib"),
    (dict(table_mib=1, queue_sizes=[65], threads=[1]), "queue sizes"),
    (dict(table_mib=1, queue_sizes=[0], threads=[0]), "threads"),
    (dict(table_mib=1, queue_sizes=[0], threads=[1], modes=["sometimes"]), "mode"),
    (dict(table_mib=1 << 30, queue_sizes=[0], threads=[1]), "GiB available"),
])
def test_absurd_parameters_fail_before_allocation(kwargs, message):
    with pytest.raises((ValueError, MemoryError), match=message):
        HashSweep(**kwargs).validate()


def test_bad_table_use():
    with pytest.raises(ValueError):
        plan(16, 0.5)
    with pytest.raises(ValueError):
        ProbingHashTable(100, "pow2")  # not a power of two
    t = ProbingHashTable(4)
    with pytest.raises(ValueError, match="key 0"):
        t.insert(np.array([0], dtype=np.uint64), np.array([1], dtype=np.uint64))
    with pytest.raises(ValueError, match="key 0|empty"):
        t.insert(np.arange(1, 5, dtype=np.uint64), np.arange(4, dtype=np.uint64))  # would fill every bucket
    with pytest.raises(ValueError, match="queue size"):
        t.find(np.array([1], dtype=np.uint64), queue_size=MAX_QUEUE + 1)


OVF = sorted(LINE_SLOTS)


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(st.integers(0, 7), min_size=1, max_size=60), high=st.randoms(use_true_random=False),
       layout=st.sampled_from(OVF), sizing=st.sampled_from(["pow2", "mod"]), queue=st.integers(0, 20))
def test_overflow_mark_adversarial(lines, high, layout, sizing, queue):
    """The -ovf layouts against Mokry's kv and a dict on a 64-bucket table whose keys crowd a few lines: lines filled
    and overflowing (the mark set, walked past), runs wrapping from the last line to the first, misses whose ideal
    line is full with its mark set or clear, inserts in any order (some overwriting); deletion-free."""
    buckets = 64
    def key(line: int) -> int:  # ideal bucket line * 8 + jitter (64 buckets: key % 64 under both sizings)
        return ((high.getrandbits(57) | 1) << 6) | ((line * 8 + high.randrange(8)) % buckets)
    keys = list(dict.fromkeys(key(l) for l in lines))[:buckets - 1]
    expect = {k: high.getrandbits(64) for k in keys}
    absent = [k for k in (key(l) for l in range(8) for _ in range(4)) if k not in expect]
    tables = {name: ProbingHashTable(buckets, sizing, name) for name in ("kv", layout)}
    k = np.array(keys, dtype=np.uint64)
    v = np.array([expect[x] for x in keys], dtype=np.uint64)
    for t in tables.values():
        t.insert(k, v)
        t.insert(k[::3], v[::3] ^ np.uint64(5))  # overwrite a third: no new slot, marks unchanged
    for x in keys[::3]:
        expect[x] ^= 5
    queries = np.array(keys + absent, dtype=np.uint64)
    got = {name: t.find(queries, queue_size=queue) for name, t in tables.items()}
    assert np.array_equal(got[layout][0], got["kv"][0]) and np.array_equal(got[layout][1], got["kv"][1])
    assert got[layout][1].tolist() == [True] * len(keys) + [False] * len(absent)
    assert got[layout][0][: len(keys)].tolist() == [expect[x] for x in keys]
    assert len(tables[layout]) == len(keys)


@pytest.mark.parametrize("layout", OVF)
@pytest.mark.parametrize("filled", [40, 56, 63])
def test_overflow_mark_fill_random(layout, filled):
    """fill_random (lock-free slot-by-slot fill, then every line's mark set from where its keys ended) at loads up to
    63/64, with 1 or 2 threads, then more inserts on top: every stream key found with kv's value, every miss of the
    stream a miss, bench checksums equal to kv's for hits and misses."""
    ref = ProbingHashTable(64, "pow2", "kv")
    ref.fill_random(filled, seed=11, threads=1)
    for threads in (1, 2):
        t = ProbingHashTable(64, "pow2", layout)
        t.fill_random(filled, seed=11, threads=threads)
        assert len(t) == len(ref)
        for mode in ("hit", "miss"):
            a = dict(fill_seed=11, filled=filled, query_seed=5, lookups=4000, mode=mode, burnin=0)
            r, rr = t.bench(queue_size=6, threads=1, **a), ref.bench(queue_size=6, threads=1, **a)
            assert (r.checksum, r.found) == (rr.checksum, rr.found)
            if mode == "hit":
                assert r.found == 4000
    # inserts after a fill keep the marks right
    rng = np.random.default_rng(filled)
    t = ProbingHashTable(64, "pow2", layout)
    t.fill_random(min(filled, 40), seed=11, threads=2)
    ref = ProbingHashTable(64, "pow2", "kv")
    ref.fill_random(min(filled, 40), seed=11, threads=1)
    extra = rng.integers(1, 2**64 - 1, size=63 - len(ref), dtype=np.uint64, endpoint=False)
    for x in (t, ref):
        x.insert(extra, extra ^ np.uint64(3))
    q = np.concatenate([extra, rng.integers(1, 2**64 - 1, size=200, dtype=np.uint64)])
    assert all(np.array_equal(a, b) for a, b in zip(t.find(q, 8), ref.find(q, 0)))
    a = dict(fill_seed=11, filled=min(filled, 40), query_seed=5, lookups=2000, mode="hit", queue_size=3, threads=1)
    assert t.bench(**a).checksum == ref.bench(**a).checksum


def test_overflow_layout_needs_whole_lines():
    with pytest.raises(ValueError, match="multiple of 8"):
        ProbingHashTable(499, "mod", "split-ovf")
    with pytest.raises(ValueError, match="multiple of 4"):
        ProbingHashTable(4, "pow2", "kv-line-ovf")
    assert plan(1000 * 16, 0.5, "mod", "split-ovf")[0] % 8 == 0


def _kenlm_hash_built() -> bool:
    from smtbench.lm import kenlm_peer
    return (kenlm_peer.bin_dir() / kenlm_peer.HASH_BENCHMARK).is_file()


@pytest.mark.skipif(not _kenlm_hash_built(), reason="KenLM's probing_hash_table_benchmark is not built "
                                                     "(bash tools/build_lmplz.sh)")
def test_kenlm_hash_benchmark_runs_beside_ours(tmp_path):
    """--kenlm-peer: KenLM's own benchmark (the patched one-size mode) is a point of every repeat, on a table of our
    bucket count; the layout table pairs it with each of our variants."""
    from smtbench.cli import main
    from smtbench.report import mokry_hash as mh
    from smtbench.report.common import read_rows

    out = tmp_path / "rows.jsonl"
    assert main(["bench", "mokry_hash", "--table-mib", "2", "--variants", "keys,kv", "--queue-sizes", "0,4",
                 "--lookups", "20000", "--repeats", "2", "--spell-probe-mib", "0", "--kenlm-peer",
                 "--out", str(out)]) == 0
    rows = read_rows([out])
    k = rows[rows.variant == "kenlm-cpp"]
    assert sorted(k.queue_size.unique()) == [0, 2, 4, 8, 16] and len(k) == 10 and (k["mode"] == "miss").all()
    assert (k.buckets == rows[rows.variant == "keys"].buckets.iloc[0]).all() and (k.table_bytes == 8 * k.buckets).all()
    t = mh.layouts(rows)
    ours = t[(t.variant != "kenlm-cpp") & (t["mode"] == "miss")]
    assert len(ours) == 2 and (ours.n_repeats == 2).all() and (ours.clock == "wall").all()
    assert (t[t.variant == "kenlm-cpp"].clock == "cpu").all() and "vs_kenlm_benchmark" not in t
    # one clock on both sides: KenLM's CPUTime() against our lookup thread's CPU time, at one thread
    assert (k.clock == "cpu").all() and (k.cpu_ns_per_lookup == k.ns_per_lookup).all()
    mine = rows[(rows.variant != "kenlm-cpp") & (rows["mode"] != "line")]
    assert (mine.clock == "wall").all() and (mine.cpu_ns_per_lookup > 0).all()
    v = mh.vs_kenlm(rows).set_index("comparison")
    assert list(v.index) == [mh.LIKE, mh.BEST, mh.MOKRY] and (v.clock == "cpu").all()
    assert v.loc[mh.LIKE, "variant"] == "keys" and v.loc[mh.LIKE, "queue_sizes"] == "0/4"
    assert v.vs_kenlm_benchmark.notna().all() and v.vs_kenlm_benchmark_ci_low.notna().all()
    assert (v.n_repeats == 2).all()


def test_an_unpatched_kenlm_hash_benchmark_is_refused(tmp_path, monkeypatch, capsys):
    """KenLM's unpatched program ignores its arguments and sweeps up to half the memory: refused before anything."""
    from smtbench.cli import main

    fake = tmp_path / "probing_hash_table_benchmark"
    fake.write_text("#!/bin/sh\necho would sweep everything\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SMTBENCH_KENLM_BIN", str(tmp_path))
    assert main(["bench", "mokry_hash", "--table-mib", "2", "--kenlm-peer", "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "not the one-size build" in capsys.readouterr().err and not (tmp_path / "r.jsonl").exists()


def test_focus_repeats_the_layout_tables_points(tmp_path):
    """bench mokry_hash --focus: after the first repeats only each variant's plain point, best queue so far and line
    floor (first mode, one thread) are timed again; the layout table's intervals rest on every kept repeat."""
    from smtbench.cli import main
    from smtbench.report import mokry_hash as mh
    from smtbench.report.common import read_rows

    out = tmp_path / "rows.jsonl"
    assert main(["bench", "mokry_hash", "--table-mib", "2", "--variants", "keys,kv", "--queue-sizes", "0,2,4",
                 "--threads", "1,2", "--mode", "miss,hit", "--lookups", "20000", "--repeats", "2", "--max-repeats",
                 "4", "--ci-target", "0.0001", "--time-budget", "60", "--focus", "--spell-probe-mib", "0",
                 "--out", str(out)]) == 0
    rows = read_rows([out])
    late = rows[rows.repeat >= 2]
    assert sorted(rows.repeat.unique()) == [0, 1, 2, 3] and late.protocol_focused.all()
    assert not rows[rows.repeat < 2].protocol_focused.any()
    assert set(late["mode"]) == {"miss", "line"} and set(late.threads) == {1}
    for v in ("keys", "kv"):
        q = sorted(late[(late.variant == v) & (late["mode"] == "miss")].queue_size.unique())
        assert len(q) == 2 and q[0] == 0  # the plain point and one best queue
    t = mh.layouts(rows)
    assert (t[t["mode"] == "miss"].n_repeats == 4).all()


# ----------------------------------------------------------------------------------------------- ours against KenLM
def _kenlm_rows(seed: int = 0):
    """Rows shaped as `bench mokry_hash --kenlm-peer` writes them (one run, 3 repeats, one thread's misses): ours by
    the wall clock with their CPU time beside it, KenLM's benchmark by CPU time only; plus decoys the headline must
    not read - our 'keys' at a queue size KenLM does not run, Mokry's layout faster at KenLM's sizes, two threads,
    a retaken attempt."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    base = dict(run_id="run-1", table_mib=2, mode="miss", lookups=1000)
    for rep in range(3):
        for v, qs in (("keys", [0, 2, 4, 8, 16, 24]), ("kv", [0, 2, 4, 8, 16, 24]), ("split-ovf", [0, 2, 4, 8, 16, 24])):
            for q in qs:
                for t in (1, 2):
                    cpu = float(rng.uniform(20, 60))
                    rows.append(dict(base, variant=v, layout=v, threads=t, queue_size=q, repeat=rep, clock="wall",
                                     ns_per_lookup=cpu * 1.1, cpu_ns_per_lookup=cpu))
        for q in (0, 2, 4, 8, 16):
            rows.append(dict(base, variant="kenlm-cpp", layout="kenlm-keys", threads=1, queue_size=q, repeat=rep,
                             clock="cpu", ns_per_lookup=float(rng.uniform(20, 60)),
                             cpu_ns_per_lookup=float("nan")))
        rows.append(dict(base, variant="keys", layout="keys", threads=1, queue_size=2, repeat=rep, clock="wall",
                         ns_per_lookup=0.5, cpu_ns_per_lookup=0.4, retaken=True))  # a retaken attempt
    d = pd.DataFrame(rows)
    d["retaken"] = d["retaken"].fillna(False).astype(bool)
    k = d.variant == "kenlm-cpp"
    d.loc[k, "cpu_ns_per_lookup"] = d.loc[k, "ns_per_lookup"]
    return d


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_kenlm_headline_is_like_for_like(seed):
    """The headline divides our 'keys' layout at KenLM's queue sizes by KenLM at the same sizes, CPU time by CPU
    time, one thread, one run; the best design and Mokry's layout are their own labelled rows; our other points
    (another queue size, another layout, two threads, a retaken attempt) never enter it."""
    from smtbench.protocol import paired_ratios
    from smtbench.report import mokry_hash as mh

    d = _kenlm_rows(seed)
    t = mh.vs_kenlm(d).set_index("comparison")
    assert list(t.index) == [mh.LIKE, mh.BEST, mh.MOKRY] and (t.clock == "cpu").all() and (t.threads == 1).all()
    like = t.loc[mh.LIKE]
    live = d[~d.retaken & (d.threads == 1)]
    sizes = [0, 2, 4, 8, 16]  # KenLM's (Immediate, PrefetchQueue 2/4/8/16), all swept by ours here
    ours = live[(live.variant == "keys") & live.queue_size.isin(sizes)]
    ken = live[live.variant == "kenlm-cpp"]
    assert like.variant == "keys" and like.queue_sizes == like.kenlm_queue_sizes == "/".join(map(str, sizes))
    assert like.cpu_ns_per_lookup == ours.cpu_ns_per_lookup.min()
    assert like.kenlm_cpu_ns_per_lookup == ken.cpu_ns_per_lookup.min()
    assert like.vs_kenlm_benchmark == pytest.approx(ken.cpu_ns_per_lookup.min() / ours.cpu_ns_per_lookup.min())
    pairs = paired_ratios(live, (live.variant == "keys") & live.queue_size.isin(sizes),
                          live.variant == "kenlm-cpp", value="cpu_ns_per_lookup")
    assert len(pairs) == 3 and like.n_repeats == 3
    assert like.vs_kenlm_benchmark_ci_low <= like.vs_kenlm_benchmark_paired <= like.vs_kenlm_benchmark_ci_high
    # the best design: the fastest of all our one-thread points (any layout, any of our queue sizes), labelled
    best = live[live.variant != "kenlm-cpp"].sort_values("cpu_ns_per_lookup").iloc[0]
    row = t.loc[mh.BEST]
    assert (row.variant, row.queue_size) == (best.variant, best.queue_size)
    assert row.vs_kenlm_benchmark == pytest.approx(ken.cpu_ns_per_lookup.min() / best.cpu_ns_per_lookup)
    assert t.loc[mh.MOKRY].variant == "kv" and t.loc[mh.MOKRY].vs_kenlm_benchmark > 0


def test_the_kenlm_headline_refuses_unlike_rows_and_waits_for_our_cpu_clock():
    from smtbench.errors import UnlikeRatio
    from smtbench.report import mokry_hash as mh

    d = _kenlm_rows()
    bad = d.copy()
    bad.loc[(bad.variant == "keys") & (bad.queue_size == 4), "run_id"] = "another-run"
    with pytest.raises(UnlikeRatio, match="vs_kenlm_benchmark refused.*run_id"):
        mh.vs_kenlm(bad)
    bad = d.copy()
    bad.loc[bad.variant == "kenlm-cpp", "clock"] = "wall"  # a peer timed by another clock than ours' CPU time
    with pytest.raises(UnlikeRatio, match="clock"):
        mh.vs_kenlm(bad)
    # KenLM's rows from before the clocks were named alike read as CPU time
    old = d.assign(clock=d["clock"].replace({"cpu": "CPUTime"}))
    assert mh.vs_kenlm(old).vs_kenlm_benchmark.notna().all()
    # ours recorded before the CPU clock: the rows stay, no ratio, a note to re-measure
    t = mh.vs_kenlm(d.drop(columns="cpu_ns_per_lookup").assign(
        cpu_ns_per_lookup=lambda x: x.ns_per_lookup.where(x.variant == "kenlm-cpp")))
    assert len(t) == 3 and t.vs_kenlm_benchmark.isna().all() and t.note.str.startswith("re-measure").all()
    # no KenLM in the run: an empty table
    assert mh.vs_kenlm(d[d.variant != "kenlm-cpp"]).empty


def test_our_rows_carry_their_clock_and_cpu_time():
    rows = run_sweep(HashSweep(table_mib=2, queue_sizes=[0, 4], threads=[1, 2], lookups=20000, repeats=1,
                               variants=["keys"]))
    assert rows and all(r["clock"] == "wall" and r["cpu_ns"] > 0 for r in rows)
    assert all(r["cpu_ns_per_lookup"] == r["cpu_ns"] / r["lookups"] for r in rows)


@pytest.mark.parametrize("sizing,buckets", [("mod", 61), ("pow2", 64)])
def test_keys_layout_crowded_runs_and_the_table_end(sizing, buckets):
    """The keys layout on a table one or two buckets short of full: runs many lines long, runs that wrap past the
    table's end, and absent keys that scan to the one empty bucket - found exactly as a set finds them, at queue 0
    and 16 (the queue also prefetches the line after the ideal bucket's)."""
    rng = np.random.default_rng(5)
    keys = np.unique(rng.integers(1, 2**64 - 1, size=buckets - 2, dtype=np.uint64))
    t = ProbingHashTable(buckets, sizing, "keys")
    t.insert(keys, np.zeros(len(keys), dtype=np.uint64))
    absent = rng.integers(1, 2**64 - 1, size=200, dtype=np.uint64)
    queries = np.concatenate([keys, absent])
    present = set(keys.tolist())
    expect = [True] * len(keys) + [int(a) in present for a in absent]
    for q in (0, 16):
        _, found = t.find(queries, queue_size=q)
        assert found.tolist() == expect
