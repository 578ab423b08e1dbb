"""`smtbench bench mokry_hash`: the hash-table prefetch sweep (Mokry §3.1, Table 3.2, Fig 3.2): one table per (size,
layout variant), all held at once, then every (variant, mode, threads, queue size) point, repeats interleaved so that
drift hits every point alike.

A variant is a layout of csrc/hash/hashprobe.h (``kv`` = Mokry's table, ``keys`` = KenLM's benchmark protocol,
``kv-line``, ``split``, ``split-pf``, and with a per-line overflow mark ``split-ovf``, ``split-ovf-pf``,
``kv-line-ovf``), optionally suffixed ``:nohuge`` (plain 4 KiB pages instead of transparent huge pages).

With ``kenlm_peer``, every repeat also runs KenLM's own hash benchmark (lm/kenlm_peer.hash_benchmark: its table of
the same bucket count, one thread, random misses through its Immediate and PrefetchQueue 2/4/8/16) as a process
between our points: rows ``variant=kenlm-cpp``, ``mode=miss``, one per queue.

Clocks: our rows' ``ns_per_lookup`` is the wall clock (``clock=wall``); every row of ours also records ``cpu_ns`` /
``cpu_ns_per_lookup``, the CPU time of the same timed loop (CLOCK_THREAD_CPUTIME_ID of each lookup thread, summed).
KenLM's benchmark reads only its CPUTime() (CLOCK_PROCESS_CPUTIME_ID of its one-thread process, around its queue's
adds and drain): its rows say ``clock=cpu`` and carry that in ``cpu_ns_per_lookup``, and the comparison with KenLM
(report.mokry_hash.vs_kenlm) divides CPU time by CPU time at one thread. The repeat loop's times (its stop ratios,
its focus) are CPU times too, so that its ``vs_kenlm_benchmark`` is the report's like-for-like headline."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

from ..benchutil import parse_int_list, require_range
from ..hash.table import LAYOUTS, MAX_QUEUE, ProbingHashTable, plan
from .harness import (Protocol, Ratio, Task, agree, must_agree, progress as progress_bar,
                      rows as open_rows)
from ..machine import HugePages
from ..resources import require_memory

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `mokry_hash` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("mokry_hash", ("hash",),
         help="hash-table lookups with and without a prefetch queue (Mokry §3.1, Table 3.2, Fig 3.2)",
         settings=(
             arg("--table-mib", type=int, required=True, config=True, grid=True,
                 help="table size in MiB (16 bytes per bucket; 8 in layout 'keys')"),
             arg("--variants", default="kv", config=True, grid=True,
                 help="comma list of LAYOUT[:nohuge], all held in memory and interleaved: kv (Mokry's 16-byte "
                      "key+value entries, the paper-faithful table), keys (KenLM's probing_hash_table_benchmark "
                      "protocol: 8-byte keys, no values), kv-line (kv probing from the ideal bucket's 64-byte "
                      "line), split (key lines apart from value lines), split-pf (split, the queue also prefetching "
                      "the value line), split-ovf / split-ovf-pf / kv-line-ovf (split / split-pf / kv-line with a "
                      "per-line overflow mark: a miss stops at its line unless an insertion probed past it); "
                      "':nohuge' = plain 4 KiB pages"),
             arg("--queue-sizes", default="0-16", config=True, help="e.g. 0-16 or 0,2,4,8 (0 = plain lookups)"),
             arg("--threads", default="1", config=True, grid=True, help="comma list of thread counts, e.g. 1,2"),
             arg("--lookups", type=int, default=2_000_000, config=True,
                 help="lookups per measurement (split over threads)"),
             arg("--mode", default="miss", config="modes", grid=True, help="hit, miss or hit,miss"),
             protocol(repeats=3),
             arg("--load-factor", type=float, default=0.6667, config=True),
             arg("--sizing", choices=["pow2", "mod"], default="pow2", config=True),
             arg("--burnin", type=int, default=4096, help="untimed lookups per thread first (Mokry: 4k)"),
             arg("--pin", action="store_true", help="pin thread i to CPU i"),
             arg("--seed", type=int, default=1),
             arg("--fill-threads", type=int, default=0, help="threads for filling (0 = all cores)"),
             arg("--kenlm-peer", action="store_true",
                 help="every repeat also runs KenLM's own probing_hash_table_benchmark (tools/build_lmplz.sh; one "
                      "thread, misses, a table of the same bucket count) as a process: rows variant=kenlm-cpp"),
             arg("--out", help="write rows here (atomically) instead of stdout"),
             arg("--progress", action="store_true", help="show a progress bar on stderr"),
             key("variant_max_mib", {}, type=dict,
                 help="a variant's largest table size (MiB): above it the variant is left out"),
             key("kenlm_peer_mib", [], type=int, grid=True, help="table sizes at which --kenlm-peer runs"),
             key("nohuge_max_mib", 0, type=int,
                 help="table sizes up to this also measure kv and split without huge pages"),
         )),
)


@dataclass(frozen=True)
class HashSweep:
    table_mib: int
    queue_sizes: list[int]
    threads: list[int]
    lookups: int = 2_000_000
    modes: list[str] = field(default_factory=lambda: ["miss"])
    repeats: int = 3
    load_factor: float = 2 / 3
    sizing: str = "pow2"
    burnin: int = 4096
    pin: bool = False
    seed: int = 1
    fill_threads: int = 0
    variants: list[str] = field(default_factory=lambda: ["kv"])
    kenlm_peer: bool = False  # KenLM's probing_hash_table_benchmark beside ours in every repeat
    protocol: Protocol | None = None  # the repeat protocol (default: exactly `repeats` alternating repeats)

    def proto(self) -> Protocol:
        return self.protocol or Protocol(repeats=self.repeats)

    def parsed_variants(self) -> list[tuple[str, bool]]:
        """(layout, huge pages) per variant."""
        out = []
        for v in self.variants:
            layout, _, opt = v.partition(":")
            if layout not in LAYOUTS or opt not in ("", "nohuge"):
                raise ValueError(f"--variants: {v!r} is not LAYOUT[:nohuge] with LAYOUT one of {sorted(LAYOUTS)}")
            out.append((layout, opt != "nohuge"))
        if len(set(out)) != len(out) or not out:
            raise ValueError(f"--variants must name distinct variants, got {self.variants}")
        return out

    def validate(self) -> None:
        """Every absurd parameter is refused here, before anything is allocated."""
        if self.table_mib < 1:
            raise ValueError(f"--table-mib must be >= 1, got {self.table_mib}")
        bad_q = [q for q in self.queue_sizes if not 0 <= q <= MAX_QUEUE]
        if bad_q:
            raise ValueError(f"queue sizes must be in 0..{MAX_QUEUE}, got {bad_q}")
        if any(t < 1 or t > 1024 for t in self.threads):
            raise ValueError(f"threads must be in 1..1024, got {self.threads}")
        if self.repeats < 1:
            raise ValueError(f"--repeats must be >= 1, got {self.repeats}")
        self.proto().validate()
        if any(m not in ("hit", "miss") for m in self.modes) or not self.modes:
            raise ValueError(f"--mode must be hit, miss or both, got {self.modes}")
        if self.lookups < max(self.threads):
            raise ValueError(f"--lookups ({self.lookups}) must be at least the thread count")
        variants = self.parsed_variants()
        plan(self.table_mib << 20, self.load_factor, self.sizing)  # load factor, sizing
        # every variant's table (held at once, so that their points interleave; at most 16 bytes a bucket) plus the
        # pre-generated keys
        need = len(variants) * (self.table_mib << 20) + 8 * self.lookups + (64 << 20)
        if self.kenlm_peer:  # its 8-byte keys table and its queries, in its own process
            need += (self.table_mib << 20) // 2 + 8 * self.lookups
        require_memory(need, f"{len(variants)} hash tables of {self.table_mib} MiB (fewer --variants need less)")


def run_sweep(s: HashSweep, out: str | None = None, progress: bool = False) -> list[dict]:
    s.validate()
    # Every variant holds the same entries in the same number of buckets (the key+value table's at --table-mib), so
    # that they answer the same queries; layout 'keys' then takes half the memory, as in KenLM's benchmark.
    buckets, max_entries = plan(s.table_mib << 20, s.load_factor, s.sizing)  # type: ignore[arg-type]
    tables: dict[str, tuple[ProbingHashTable, int, str, bool]] = {}
    on_huge: dict[str, HugePages] = {}  # how much of each table the kernel put on huge pages
    for name, (layout, huge) in zip(s.variants, s.parsed_variants()):
        with HugePages(f"hash table {name} ({s.table_mib} MiB)", 0, huge) as hp:
            table = ProbingHashTable(buckets, s.sizing, layout, huge)  # type: ignore[arg-type]
            hp.nbytes = table.nbytes
            table.fill_random(max_entries, s.seed, s.fill_threads or (os.cpu_count() or 1))
        tables[name] = (table, max_entries, layout, huge)
        on_huge[name] = hp
    points = [(v, m, t, q) for v in s.variants for m in s.modes for t in s.threads for q in s.queue_sizes]
    # the machine's floor: independent random line reads over the same memory (no queue)
    points += [(v, "line", t, 0) for v in s.variants for t in s.threads]
    stats = {(v, m): tables[v][0].probe_stats(fill_seed=s.seed, filled=tables[v][1], query_seed=s.seed + 1000,
                                              lookups=s.lookups, mode=m)  # type: ignore[arg-type]
             for v in s.variants for m in s.modes}
    rows: list[dict] = []
    checksums: dict[str, list[tuple[str, int]]] = {}  # per mode: (point/repeat, checksum)
    floors: dict[str, list[tuple[str, int]]] = {}
    with open_rows("mokry_hash", out) as writer:
        bar = progress_bar(len(points) * s.repeats, progress, f"hash {s.table_mib} MiB")

        def point(variant: str, mode: str, threads: int, q: int) -> Task:
            def fn(rep: int) -> float:
                table, max_entries, layout, huge = tables[variant]
                r = table.bench(fill_seed=s.seed, filled=max_entries, query_seed=s.seed + 1000,
                                lookups=s.lookups, mode=mode, queue_size=q, threads=threads,  # type: ignore[arg-type]
                                burnin=s.burnin, pin=s.pin)
                per_thread = s.lookups / threads
                at = f"{variant}/{threads}/{q}/repeat {rep}"
                if mode == "line":
                    floors.setdefault(variant, []).append((at, r.checksum))
                else:
                    checksums.setdefault(mode, []).append((at, r.checksum))
                st = stats.get((variant, mode), (1.0, 1.0))
                rows.append(writer.emit(
                    table_mib=s.table_mib, table_bytes=table.nbytes, buckets=table.buckets,
                    entries=max_entries, load_factor=round(max_entries / table.buckets, 6),
                    sizing=s.sizing, layout=layout, variant=variant, huge_requested=huge,
                    huge_pages=table.huge_pages, table_huge_mib=on_huge[variant].mib,
                    table_huge_share=on_huge[variant].share, mode=mode, threads=threads,
                    queue_size=q, lookups=s.lookups, repeat=rep, wall_ns=r.wall_ns,
                    ns_per_lookup=r.wall_ns / per_thread, clock="wall", cpu_ns=r.cpu_ns,
                    cpu_ns_per_lookup=r.cpu_ns / s.lookups,
                    mlookups_per_s=s.lookups / r.wall_ns * 1e3, checksum=str(r.checksum), found=r.found,
                    mean_probes=st[0], mean_lines=st[1]))
                return r.cpu_ns  # the loop's times: CPU, KenLM's clock (the module docstring)
            return Task(f"{variant}/{mode}/{threads}/{q}", fn)

        # every point once per repeat, alternating or shuffled (smtbench.protocol); the headline ratio of the adaptive
        # stop: the first variant's best queue against no queue, first mode, one thread (when swept)
        tasks = [point(*pt) for pt in points]
        v0, m0, t0 = s.variants[0], s.modes[0], min(s.threads)
        qs = [q for q in s.queue_sizes if q > 0]
        # the like-for-like headline: our 'keys' layout (KenLM's 8-byte keys) at KenLM's queue sizes that we sweep
        like_qs = [q for q in s.queue_sizes if q in KENLM_QUEUES]
        if s.kenlm_peer:
            tasks.append(kenlm_point(writer, rows, s, buckets, max_entries, like_qs or list(KENLM_QUEUES)))
        ratios = []
        if 0 in s.queue_sizes and qs:
            def best_queue(t: dict) -> float | None:
                best = min((t[k] for k in (f"{v0}/{m0}/{t0}/{q}" for q in qs) if k in t), default=None)
                base = t.get(f"{v0}/{m0}/{t0}/0")
                return base / best if best and base else None
            ratios.append(Ratio("best_queue_speedup", best_queue))
        kenlm_key = "kenlm-cpp/miss/1/best"
        like_keys = [f"keys/miss/1/{q}" for q in like_qs]
        if s.kenlm_peer and "miss" in s.modes and 1 in s.threads and "keys" in s.variants and like_qs:
            def vs_kenlm(t: dict) -> float | None:
                """Like for like (CPU time, one thread's misses): KenLM's best of its queue sizes / our 'keys'
                layout's best of the same sizes."""
                ours = min((t[k] for k in like_keys if k in t), default=None)
                return t[kenlm_key] / ours if ours and t.get(kenlm_key) else None
            ratios.append(Ratio("vs_kenlm_benchmark", vs_kenlm))

        def headline(kept: list[dict[str, float]]) -> list[str]:
            """--focus: the points the layout table's ratios compare on the first mode and the fewest threads: each
            variant's plain point, its queue size of the best time so far (the report's best queue: later repeats
            can only lower its time), its random-line floor, and KenLM's benchmark."""
            keys = [kenlm_key] if s.kenlm_peer else []
            if s.kenlm_peer and "keys" in s.variants:  # the like-for-like headline's side of ours: every size of it
                keys += [k for k in like_keys if any(k in t for t in kept)]
            for v in s.variants:
                low = {k: min(t[k] for t in kept if k in t) for k in (f"{v}/{m0}/{t0}/{q}" for q in qs)
                       if any(k in t for t in kept)}
                keys += [f"{v}/{m0}/{t0}/0", f"{v}/line/{t0}/0"] + ([min(low, key=low.get)] if low else [])
            return keys

        Sweep(f"hash {s.table_mib} MiB", s.proto(), writer, ratios=ratios, progress=bar, focus=headline).add(
            *tasks, peers=[t.key for t in tasks if t.key.startswith("kenlm-")]).run()
        bar.close()
        # The checksum folds every found value (or the key of a miss): it must not depend on the layout, queue
        # size, thread count or repeat (the random-line floor folds whatever its table holds: per variant). A
        # mismatch is a wrong build: fail loudly.
        for m, c in checksums.items():
            agree(f"checksums of {m} lookups", c, "layouts/queue sizes/threads/repeats")
        for v, c in floors.items():
            agree(f"checksums of the random-line floor of {v}", c, "threads/repeats")
    return rows


#: the queue sizes KenLM's benchmark runs (0: its Immediate)
KENLM_QUEUES = (0, 2, 4, 8, 16)


def kenlm_point(writer, rows: list[dict], s: HashSweep, buckets: int, max_entries: int, like_qs: list[int]) -> Task:
    """KenLM's hash benchmark as one point of every repeat: as many buckets as ours (its sizing: the next power of
    two of 1.5 x entries, so at most buckets / 1.5 entries), the same lookup count; the task's time is the CPU time
    of its best queue among ``like_qs`` (its sizes that ours sweeps too; main refuses to start when the program is
    not built)."""
    from ..lm import kenlm_peer

    entries = min(max_entries, int(buckets / 1.5))

    def fn(rep: int) -> float:
        r = kenlm_peer.hash_benchmark(entries, s.lookups)
        must_agree(r.table_bytes == 8 * buckets, f"KenLM's hash benchmark sized {r.table_bytes} bytes for {entries} "
                                                 f"entries, not {8 * buckets} (8 x our {buckets} buckets)")
        for q, ns in sorted(r.ns_per_lookup.items()):
            rows.append(writer.emit(
                table_mib=s.table_mib, table_bytes=r.table_bytes, buckets=buckets, entries=entries,
                load_factor=round(entries / buckets, 6), sizing="pow2", layout="kenlm-keys", variant="kenlm-cpp",
                huge_requested=True, mode="miss", threads=1, queue_size=q, lookups=s.lookups, repeat=rep,
                ns_per_lookup=ns, mlookups_per_s=1e3 / ns, insert_ns=r.insert_ns,
                clock="cpu", cpu_ns=ns * s.lookups, cpu_ns_per_lookup=ns, peer=kenlm_peer.HASH_INCLUDES))
        return min(ns for q, ns in r.ns_per_lookup.items() if q in like_qs) * s.lookups
    return Task("kenlm-cpp/miss/1/best", fn)


def main(args: argparse.Namespace) -> int:
    """`bench mokry_hash` (options: VERBS above)."""
    require_range("--table-mib", args.table_mib, 1, 1 << 24)
    require_range("--seed", args.seed, 0, 2**63 - 1)
    require_range("--burnin", args.burnin, 0, 1 << 30)
    require_range("--lookups", args.lookups, 1, 1 << 40)
    require_range("--repeats", args.repeats, 1, 1000)
    require_range("--fill-threads", args.fill_threads, 0, 1024)
    require_range("--load-factor", args.load_factor, 0.01, 0.99)
    sweep = HashSweep(
        table_mib=args.table_mib, queue_sizes=parse_int_list(args.queue_sizes, 0, 64, "--queue-sizes"),
        threads=parse_int_list(args.threads, 1, 1024, "--threads"), lookups=args.lookups,
        modes=[m.strip() for m in args.mode.split(",") if m.strip()], repeats=args.repeats,
        load_factor=args.load_factor, sizing=args.sizing, burnin=args.burnin, pin=args.pin,
        seed=args.seed, fill_threads=args.fill_threads,
        variants=[v.strip() for v in args.variants.split(",") if v.strip()], kenlm_peer=args.kenlm_peer,
        protocol=Protocol.from_args(args))
    if sweep.kenlm_peer:
        from ..lm import kenlm_peer
        kenlm_peer.hash_program()  # a missing or unpatched peer fails before the tables are filled
    run_sweep(sweep, out=args.out, progress=args.progress)
    return 0
