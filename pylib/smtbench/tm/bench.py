"""`smtbench bench tmscore`: Mediani Tables 1, 3 and 4 analogues on this machine.

Every measurement runs as a child process (`smtbench tm score ...`), timed by wall clock with its peak RSS
from wait4(); repeats are interleaved over the points. Correctness is checked inside the benchmark: every
table of a corpus fraction must equal the pandas oracle's (when the oracle runs for that fraction) or else
the first table of that fraction (same pairs, scores within 1e-6), and all of ours must be byte-identical.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ..benchutil import RowWriter, parse_size
from ..protocol import Protocol, Ratio, RepeatLoop, Task, describe
from ..ioutil import atomic_open, open_text


@dataclass
class TmScoreSweep:
    extract: str
    extract_inv: str
    lex_f2e: str
    lex_e2f: str
    workdir: str
    fractions: list[float] = field(default_factory=lambda: [0.25, 0.5, 1.0, 4.0])
    threads: list[int] = field(default_factory=lambda: [1, 2])
    memory: list[str] = field(default_factory=lambda: ["64M", "256M"])
    systems: list[str] = field(default_factory=lambda: ["ours", "memory", "sort"])
    memory_max_fraction: float = 1.0      # the pandas baseline only up to this fraction
    sort_memory: str = "256M"
    partitions: list[int] = field(default_factory=lambda: [1, 2, 4])
    partition_fraction: float = 1.0
    repeats: int = 2
    protocol: Protocol | None = None  # the repeat protocol (default: exactly `repeats` alternating repeats)

    def proto(self) -> Protocol:
        return self.protocol or Protocol(repeats=self.repeats)

    def validate(self) -> None:
        for p in (self.extract, self.extract_inv, self.lex_f2e, self.lex_e2f):
            if not os.path.exists(p):
                raise FileNotFoundError(f"{p}: no such file")
        if any(f <= 0 for f in self.fractions):
            raise ValueError(f"fractions must be > 0: {self.fractions}")
        if any(t < 1 for t in self.threads) or self.repeats < 1:
            raise ValueError("threads and repeats must be >= 1")
        bad = set(self.systems) - {"ours", "memory", "sort"}
        if bad:
            raise ValueError(f"unknown systems {sorted(bad)}")
        for m in self.memory + [self.sort_memory]:
            parse_size(m)
        self.proto().validate()


def _make_fraction(src: str, dst: Path, frac: float, total: int) -> None:
    """The first frac of the lines (frac <= 1), or the whole file replicated frac times (integer frac > 1)."""
    if dst.exists():
        return
    with atomic_open(dst) as fo:
        if frac <= 1:
            n = int(total * frac)
            with open_text(src) as fi:
                for i, line in enumerate(fi):
                    if i >= n:
                        break
                    fo.write(line)
        else:
            if frac != int(frac):
                raise ValueError(f"a replication factor must be an integer: {frac}")
            for _ in range(int(frac)):
                with open_text(src) as fi:
                    shutil.copyfileobj(fi, fo, 1 << 20)


def _run(cmd: list[str]) -> tuple[float, int]:
    """(seconds, peak RSS bytes) of one command. The peak comes from GNU time (`/usr/bin/time -f %M`): a
    child forked from this (large) interpreter would inherit its high-water mark in wait4's ru_maxrss."""
    import tempfile
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as tf:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name, *cmd], stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        if proc.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed with status {proc.returncode}")
        rss = int(tf.read().split()[-1]) * 1024
    return dt, rss


def _md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def run_sweep(s: TmScoreSweep, out: str | None, progress: bool = False) -> list[dict]:
    from .score import compare_tables, read_table
    s.validate()
    work = Path(s.workdir)
    work.mkdir(parents=True, exist_ok=True)
    with open_text(s.extract) as fh:
        total = sum(1 for _ in fh)
    inputs = {}
    for frac in sorted(set(s.fractions) | {s.partition_fraction}):
        e, ei = work / f"extract.f{frac:g}", work / f"extract.inv.f{frac:g}"
        _make_fraction(s.extract, e, frac, total)
        _make_fraction(s.extract_inv, ei, frac, total)
        inputs[frac] = (e, ei)
    smt = [sys.executable, "-m", "smtbench.cli"]
    lex = ["--lex-f2e", s.lex_f2e, "--lex-e2f", s.lex_e2f]
    points: list[dict] = []
    for frac in s.fractions:
        e, ei = inputs[frac]
        lines = total * frac if frac > 1 else int(total * frac)
        if "ours" in s.systems:
            for t in s.threads:
                for m in s.memory:
                    points.append(dict(system="ours", fraction=frac, threads=t, memory=m, partitions=0,
                                       lines=lines))
        if "sort" in s.systems:
            points.append(dict(system="sort", fraction=frac, threads=1, memory=s.sort_memory, partitions=0,
                               lines=lines))
        if "memory" in s.systems and frac <= s.memory_max_fraction:
            points.append(dict(system="memory", fraction=frac, threads=1, memory="", partitions=0, lines=lines))
    for k in s.partitions:
        points.append(dict(system="distributed", fraction=s.partition_fraction, threads=max(s.threads),
                           memory=s.memory[-1], partitions=k, lines=int(total * min(1.0, s.partition_fraction))
                           if s.partition_fraction <= 1 else total * s.partition_fraction))
    rows: list[dict] = []
    refs: dict[float, Path] = {}     # the table each fraction's outputs are checked against
    ours_md5: dict[float, str] = {}
    fh = atomic_open(out, "w") if out else None
    try:
        writer = RowWriter("mediani_scoring", fh.__enter__() if fh else sys.stdout)
        bar = tqdm(total=len(points) * s.repeats, disable=not progress, desc="tmscore", file=sys.stderr)
        def point(p: dict) -> Task:
            def fn(rep: int) -> float:
                frac = p["fraction"]
                e, ei = inputs[frac]
                tag = f"{p['system']}.f{frac:g}.t{p['threads']}.m{p['memory']}.k{p['partitions']}"
                table = work / f"pt.{tag}.txt"
                extra: dict = {}
                if p["system"] == "ours":
                    secs, rss = _run(smt + ["tm", "score", "--extract", str(e), *lex, "--out", str(table),
                                            "--threads", str(p["threads"]), "--memory", p["memory"],
                                            "--tmpdir", str(work), "--stats", str(table) + ".json"])
                    import json
                    extra = {k: v for k, v in json.loads(Path(str(table) + ".json").read_text()).items()
                             if k in ("runs1", "runs2", "run_bytes", "pairs", "s_load", "s_merge1", "s_merge2",
                                      "buffer_bytes")}
                elif p["system"] == "sort":
                    secs, rss = _run(smt + ["tm", "score-sort", "--extract", str(e), "--extract-inv", str(ei), *lex,
                                            "--out", str(table), "--memory", p["memory"], "--tmpdir", str(work)])
                elif p["system"] == "memory":
                    secs, rss = _run(smt + ["tm", "score-memory", "--extract", str(e), *lex, "--out", str(table)])
                else:  # distributed: partition, score partitions with partial counts, merge
                    k = p["partitions"]
                    pdir = work / f"dist{k}"
                    pdir.mkdir(exist_ok=True)
                    t_part, rss = _run(smt + ["tm", "partition", "--extract", str(e), "--parts", str(k),
                                              "--outdir", str(pdir)])
                    part_secs = []
                    for i in range(k):
                        dt, r = _run(smt + ["tm", "score", "--extract", str(pdir / f"part{i}.extract.gz"), *lex,
                                            "--out", str(pdir / f"part{i}.counts.gz"), "--counts",
                                            "--threads", str(p["threads"]), "--memory", p["memory"],
                                            "--tmpdir", str(pdir)])
                        part_secs.append(dt)
                        rss = max(rss, r)
                    t_merge, r = _run(smt + ["tm", "score", "--weighted", "--extract",
                                             *[str(pdir / f"part{i}.counts.gz") for i in range(k)], *lex,
                                             "--out", str(table), "--threads", str(p["threads"]),
                                             "--memory", p["memory"], "--tmpdir", str(pdir)])
                    rss = max(rss, r)
                    secs = t_part + sum(part_secs) + t_merge
                    extra = dict(s_partition=t_part, s_partitions_sum=sum(part_secs),
                                 s_partition_max=max(part_secs), s_merge=t_merge,
                                 s_critical_path=t_part + max(part_secs) + t_merge)
                # correctness, inside the benchmark
                if p["system"] in ("ours", "distributed"):
                    md5 = _md5(table)
                    if ours_md5.setdefault(frac, md5) != md5:
                        raise RuntimeError(f"{table}: differs from our other tables of fraction {frac}")
                    # same bytes for every thread count/budget of this run (checked above); across runs the
                    # table changes with the (unseeded) alignment, so metrics count distinct digests only
                    extra["table_md5"] = md5
                if frac not in refs:
                    refs[frac] = table
                    check = "reference"
                elif p["system"] == "ours" and refs[frac].name.startswith("pt.ours"):
                    check = "md5"
                elif rep > 0 and p["system"] != "ours":
                    check = "checked in repeat 0"  # deterministic programs: one full comparison per point
                else:
                    diff = compare_tables(read_table(str(table)), read_table(str(refs[frac])))
                    check = f"equal to {refs[frac].name} (max score diff {max(diff.values()):.2g})"
                rows.append(writer.emit(**p, repeat=rep, seconds=secs, peak_rss_bytes=rss,
                                        lines_per_s=p["lines"] / secs, check=check, **extra))
                if table != refs[frac]:
                    table.unlink()  # checked; keep only each fraction's reference table on disk
                return secs * 1e9
            return Task(f"{p['system']}.f{p['fraction']:g}.t{p['threads']}.m{p['memory']}.k{p['partitions']}", fn)

        # every point once per repeat, alternating or shuffled (smtbench.protocol); headline ratio of the adaptive
        # stop: ours (most threads) against the sort pipeline on the largest fraction
        tasks = [point(p) for p in points]
        keys = {t.key for t in tasks}
        fmax, tmax = max(s.fractions), max(s.threads)
        ours_k = f"ours.f{fmax:g}.t{tmax}.m{s.memory[0]}.k0"
        sort_k = f"sort.f{fmax:g}.t1.m{s.sort_memory}.k0"
        ratios = [Ratio.speedup("speedup_vs_sort", ours_k, sort_k)] if {ours_k, sort_k} <= keys else []
        summary = RepeatLoop(s.proto(), writer, tasks, ratios, progress=bar).run()
        print(f"tmscore: {describe(summary)}", file=sys.stderr)
        bar.close()
        if fh:
            fh.__exit__(None, None, None)
    except BaseException as exc:
        if fh:
            fh.__exit__(type(exc), exc, exc.__traceback__)
        raise
    return rows
