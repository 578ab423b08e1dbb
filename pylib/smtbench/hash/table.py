"""Typed wrapper of csrc/hash/hashprobe.c: the linear-probing table and its prefetch queue (Mokry §3.1)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..native import as_ptr, check, ffi, lib
from ..resources import require_memory

Sizing = Literal["pow2", "mod"]
Layout = Literal["kv", "keys", "kv-line", "split", "split-pf", "split-ovf", "split-ovf-pf", "kv-line-ovf"]
Mode = Literal["hit", "miss", "line"]
MAX_QUEUE = int(lib.SB_HASH_MAX_QUEUE)
_SIZING = {"pow2": lib.SB_HASH_POW2, "mod": lib.SB_HASH_MOD}
# The memory layouts (csrc/hash/hashprobe.h): kv = Mokry's 16-byte {key, value} table (paper-faithful); keys = KenLM's
# benchmark protocol (8-byte keys, no values); kv-line = kv probing from the ideal bucket's 64-byte line; split =
# key lines apart from value lines, probing from the ideal key line; split-pf = split whose queue also prefetches
# the value line (speculatively: wasted on a miss); split-ovf / split-ovf-pf / kv-line-ovf = split / split-pf / kv-line
# with a per-line overflow mark (kept in the order of a full line's first two keys), so that a miss whose line is
# not marked stops at that line. The -ovf layouts need a bucket count that is a multiple of their line's slots.
LAYOUTS: dict[str, int] = {"kv": lib.SB_HASH_KV, "keys": lib.SB_HASH_KEYS, "kv-line": lib.SB_HASH_KV_LINE,
                           "split": lib.SB_HASH_SPLIT, "split-pf": lib.SB_HASH_SPLIT_PF,
                           "split-ovf": lib.SB_HASH_SPLIT_OVF, "split-ovf-pf": lib.SB_HASH_SPLIT_OVF_PF,
                           "kv-line-ovf": lib.SB_HASH_KV_LINE_OVF}
# slots of one 64-byte line in the overflow-mark layouts: their bucket count must be a multiple of it
LINE_SLOTS: dict[str, int] = {"split-ovf": 8, "split-ovf-pf": 8, "kv-line-ovf": 4}
_MODE = {"hit": lib.SB_LOOKUP_HIT, "miss": lib.SB_LOOKUP_MISS, "line": lib.SB_LOOKUP_LINE}


@dataclass(frozen=True)
class BenchResult:
    wall_ns: int
    max_thread_ns: int
    checksum: int
    found: int
    cpu_ns: int = 0  # CPU time of the timed loops, every thread's summed (on one thread: KenLM's CPUTime() clock)


def _check_layout(layout: str) -> int:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {sorted(LAYOUTS)}, got {layout!r}")
    return int(LAYOUTS[layout])


def plan(table_bytes: int, load_factor: float = 2 / 3, sizing: Sizing = "pow2",
         layout: Layout = "kv") -> tuple[int, int]:
    """(buckets, max entries) for a table of ``table_bytes`` at ``load_factor``; ValueError if absurd."""
    if not 0.0 < load_factor < 1.0:
        raise ValueError(f"load factor must be in (0, 1), got {load_factor}")
    if sizing not in _SIZING:
        raise ValueError(f"sizing must be one of {sorted(_SIZING)}, got {sizing!r}")
    if table_bytes < 32:
        raise ValueError(f"table size must be at least 32 bytes, got {table_bytes}")
    buckets = ffi.new("uint64_t *")
    entries = ffi.new("uint64_t *")
    check(lib.sb_hash_plan(table_bytes, load_factor, _SIZING[sizing], _check_layout(layout), buckets, entries),
          "hash plan")
    return int(buckets[0]), int(entries[0])


class ProbingHashTable:
    """64-bit keys → 64-bit values, key 0 reserved as the empty sentinel. Layout ``keys`` stores no values (find
    reports found with value 0); ``huge`` asks for transparent huge pages (False: plain 4 KiB pages)."""

    def __init__(self, buckets: int, sizing: Sizing = "pow2", layout: Layout = "kv", huge: bool = True):
        if sizing not in _SIZING:
            raise ValueError(f"sizing must be one of {sorted(_SIZING)}, got {sizing!r}")
        if buckets < 2:
            raise ValueError(f"need at least 2 buckets, got {buckets}")
        code = _check_layout(layout)
        g = LINE_SLOTS.get(layout, 1)
        if buckets % g or buckets < 2 * g:
            raise ValueError(f"layout {layout!r} needs a bucket count that is a multiple of {g} (at least {2 * g}), "
                             f"got {buckets}")
        require_memory(buckets * (8 if layout == "keys" else 16), f"a hash table of {buckets} buckets")
        out = ffi.new("sb_hash **")
        check(lib.sb_hash_create(buckets, _SIZING[sizing], code, int(huge), out), "hash create")
        self._t = ffi.gc(out[0], lib.sb_hash_free)
        self.sizing = sizing
        self.layout = layout

    @classmethod
    def for_bytes(cls, table_bytes: int, load_factor: float = 2 / 3, sizing: Sizing = "pow2",
                  layout: Layout = "kv", huge: bool = True) -> tuple["ProbingHashTable", int]:
        buckets, max_entries = plan(table_bytes, load_factor, sizing, layout)
        return cls(buckets, sizing, layout, huge), max_entries

    @property
    def buckets(self) -> int:
        return int(lib.sb_hash_buckets(self._t))

    def __len__(self) -> int:
        return int(lib.sb_hash_entries(self._t))

    @property
    def nbytes(self) -> int:
        return int(lib.sb_hash_bytes(self._t))

    @property
    def huge_pages(self) -> bool:
        return bool(lib.sb_hash_uses_huge_pages(self._t))

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        k = np.ascontiguousarray(keys, dtype=np.uint64)
        v = np.ascontiguousarray(values, dtype=np.uint64)
        if k.shape != v.shape:
            raise ValueError("keys and values differ in length")
        check(lib.sb_hash_insert(self._t, as_ptr("uint64_t *", k), as_ptr("uint64_t *", v), len(k)),
              "hash insert (key 0 is reserved; the table must keep one empty bucket)")

    def find(self, keys: np.ndarray, queue_size: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(values, found) for each key; queue_size 0 = plain lookups, else a prefetch queue."""
        _check_queue(queue_size)
        k = np.ascontiguousarray(keys, dtype=np.uint64)
        values = np.zeros(len(k), dtype=np.uint64)
        found = np.zeros(len(k), dtype=np.uint8)
        check(lib.sb_hash_find_batch(self._t, as_ptr("uint64_t *", k), len(k), queue_size,
                                     as_ptr("uint64_t *", values), as_ptr("uint8_t *", found)),
              "hash find")
        return values, found.astype(bool)

    def fill_random(self, n_entries: int, seed: int, threads: int = 1) -> None:
        check(lib.sb_hash_fill_random(self._t, n_entries, seed, threads), "hash fill")

    def bench(self, *, fill_seed: int, filled: int, query_seed: int, lookups: int, mode: Mode,
              queue_size: int, threads: int, burnin: int = 4096, pin: bool = False) -> BenchResult:
        _check_queue(queue_size)
        if mode not in _MODE:
            raise ValueError(f"mode must be 'hit', 'miss' or 'line', got {mode!r}")
        if mode == "line" and queue_size:
            raise ValueError("mode 'line' (random line reads) takes no prefetch queue")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if lookups < threads:
            raise ValueError(f"need at least one lookup per thread ({lookups} < {threads})")
        args = ffi.new("sb_hash_bench_args *", {
            "fill_seed": fill_seed, "filled": filled, "query_seed": query_seed, "lookups": lookups,
            "burnin": burnin, "mode": _MODE[mode], "queue_size": queue_size, "threads": threads,
            "pin": int(pin)})
        res = ffi.new("sb_hash_bench_result *")
        check(lib.sb_hash_bench(self._t, args, res), "hash bench")
        return BenchResult(int(res.wall_ns), int(res.max_thread_ns), int(res.checksum), int(res.found),
                           int(res.cpu_ns))


    def probe_stats(self, *, fill_seed: int, filled: int, query_seed: int, lookups: int,
                    mode: Mode) -> tuple[float, float]:
        """(mean buckets probed, mean distinct cache lines touched) per query of the benchmark stream."""
        args = ffi.new("sb_hash_bench_args *", {"fill_seed": fill_seed, "filled": filled,
                                                "query_seed": query_seed, "lookups": lookups, "mode": _MODE[mode]})
        probes, lines = ffi.new("double *"), ffi.new("double *")
        check(lib.sb_hash_probe_stats(self._t, args, probes, lines), "hash probe stats")
        return float(probes[0]), float(lines[0])


def _check_queue(queue_size: int) -> None:
    if not 0 <= queue_size <= MAX_QUEUE:
        raise ValueError(f"queue size must be in 0..{MAX_QUEUE}, got {queue_size}")
