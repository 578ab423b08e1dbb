"""The linear-probing table against a Python dict, and every queue size against plain lookups."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smtbench.hash.bench import HashSweep, run_sweep
from smtbench.hash.table import LAYOUTS, MAX_QUEUE, ProbingHashTable, plan

keys64 = st.integers(min_value=1, max_value=2**64 - 1)


@settings(max_examples=60, deadline=None)
@given(items=st.dictionaries(keys64, st.integers(0, 2**64 - 1), max_size=300),
       absent=st.lists(keys64, max_size=100),
       sizing=st.sampled_from(["pow2", "mod"]), queue=st.integers(0, MAX_QUEUE),
       layout=st.sampled_from(sorted(LAYOUTS)))
def test_matches_dict(items, absent, sizing, queue, layout):
    buckets = 512 if sizing == "pow2" else 499
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
                               variants=["kv", "keys", "kv-line", "split", "split-pf", "kv:nohuge", "split:nohuge"]))
    for mode in ("hit", "miss"):
        got = [r for r in rows if r["mode"] == mode]
        assert len(got) == 7 * 3 * 2 and len({r["checksum"] for r in got}) == 1
    lines = {r["variant"]: r["mean_lines"] for r in rows if r["mode"] == "miss"}
    assert lines["kv-line"] <= lines["kv"] and lines["split"] <= lines["kv"]
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
