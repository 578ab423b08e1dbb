"""The hash-table prefetch sweep (Mokry §3.1): one table per size, then every (mode, threads,
queue size) point, repeats interleaved so that drift hits every point alike."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from tqdm import tqdm

from ..benchutil import RowWriter
from .table import MAX_QUEUE, ProbingHashTable, plan
from ..ioutil import output_or_stdout
from ..resources import require_memory


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
        if any(m not in ("hit", "miss") for m in self.modes) or not self.modes:
            raise ValueError(f"--mode must be hit, miss or both, got {self.modes}")
        if self.lookups < max(self.threads):
            raise ValueError(f"--lookups ({self.lookups}) must be at least the thread count")
        plan(self.table_mib << 20, self.load_factor, self.sizing)  # load factor, sizing
        # the table plus each thread's pre-generated keys
        need = (self.table_mib << 20) + 8 * self.lookups + (64 << 20)
        require_memory(need, f"a {self.table_mib} MiB hash table")


def run_sweep(s: HashSweep, out: str | None = None, progress: bool = False) -> list[dict]:
    s.validate()
    table, max_entries = ProbingHashTable.for_bytes(s.table_mib << 20, s.load_factor, s.sizing)  # type: ignore[arg-type]
    table.fill_random(max_entries, s.seed, s.fill_threads or (os.cpu_count() or 1))
    points = [(m, t, q) for m in s.modes for t in s.threads for q in s.queue_sizes]
    # the machine's floor: independent random line reads over the same memory (no queue)
    points += [("line", t, 0) for t in s.threads]
    stats = {m: table.probe_stats(fill_seed=s.seed, filled=max_entries, query_seed=s.seed + 1000,
                                  lookups=s.lookups, mode=m) for m in s.modes}  # type: ignore[arg-type]
    rows: list[dict] = []
    checksums: dict[str, set[int]] = {}
    with output_or_stdout(out) as fh:
        writer = RowWriter("mokry_hash", fh)
        bar = tqdm(total=len(points) * s.repeats, disable=not progress, desc=f"hash {s.table_mib} MiB",
                   file=sys.stderr)
        for rep in range(s.repeats):
            for mode, threads, q in points:
                r = table.bench(fill_seed=s.seed, filled=max_entries, query_seed=s.seed + 1000,
                                lookups=s.lookups, mode=mode, queue_size=q, threads=threads,  # type: ignore[arg-type]
                                burnin=s.burnin, pin=s.pin)
                per_thread = s.lookups / threads
                checksums.setdefault(mode, set()).add(r.checksum)
                rows.append(writer.emit(
                    table_mib=s.table_mib, table_bytes=table.nbytes, buckets=table.buckets,
                    entries=max_entries, load_factor=round(max_entries / table.buckets, 6),
                    sizing=s.sizing, huge_pages=table.huge_pages, mode=mode, threads=threads,
                    queue_size=q, lookups=s.lookups, repeat=rep, wall_ns=r.wall_ns,
                    ns_per_lookup=r.wall_ns / per_thread,
                    mlookups_per_s=s.lookups / r.wall_ns * 1e3, checksum=str(r.checksum), found=r.found,
                    mean_probes=stats[mode][0] if mode in stats else 1.0,
                    mean_lines=stats[mode][1] if mode in stats else 1.0))
                bar.update()
        bar.close()
        # The checksum folds every found value (or the bucket where a miss stopped): it must not
        # depend on queue size, thread count or repeat. A mismatch is a wrong build: fail loudly.
        bad = {m: c for m, c in checksums.items() if len(c) != 1}
        if bad:
            raise RuntimeError(f"checksums differ across queue sizes/threads/repeats: {bad}")
    return rows
