"""KenLM's own C++ programs as live peers (built from the kenlm sdist by tools/build_lmplz.sh, never committed):
``build_binary`` makes KenLM's probing and trie models of the same ARPA, ``kenlm_benchmark -v`` turns the same
tiled document into that model's vocabulary ids (outside any timing, as its usage says), and
``kenlm_benchmark -q -t T`` times the queries on T worker threads.

What KenLM's figure includes: it excludes loading, but a reader thread feeds the ids from the page cache in
4,096-word buffers to the worker threads (so the process may use a core more than T; its CPU figure shows it), and
each worker sums log10 probabilities in float per buffer. Ours times the C loop over an in-memory id array.

How it loads (lm/kenlm_benchmark_main.cc): always ``load_method = util::READ`` (it has no ``-l``, unlike ``query``):
the model is read() into anonymous memory from util::HugeMalloc (a MAP_HUGETLB pool where a sysadmin made one, else
2 MiB-aligned memory with madvise(MADV_HUGEPAGE)), so no lazily mapped file faults inside the timed part; the
fastest way its usage documents is the one followed here (ids converted offline, ids and model read into the page
cache first). Each process gets fresh memory, unlike ours (one allocation per run)."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..ioutil import atomic_open, atomic_path
from .. import procs

def includes(threads: int = 1) -> str:
    """What a row of ``kenlm_benchmark -q -t threads`` includes (the rows' ``includes``)."""
    workers = "one worker thread" if threads == 1 else f"{threads} worker threads"
    return (f"KenLM's kenlm_benchmark -q -t {threads} on its own binary of the same ARPA: excludes loading; {workers}, "
            "fed by a reader thread from the page cache in 4,096-word buffers; float sum per buffer; "
            "ids prepared beforehand by kenlm_benchmark -v")


INCLUDES = includes(1)
KINDS = ("probing", "trie")


def bin_dir() -> Path:
    """$SMTBENCH_KENLM_BIN, else build/lmplz/bin of this checkout."""
    env = os.environ.get("SMTBENCH_KENLM_BIN")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "build" / "lmplz" / "bin"


def program(name: str) -> Path:
    p = bin_dir() / name
    if not os.access(p, os.X_OK):
        raise FileNotFoundError(f"{p}: KenLM's {name} is not built (run `bash tools/build_lmplz.sh`, or set "
                                f"SMTBENCH_KENLM_BIN)")
    return p


def build_binary(arpa: str | os.PathLike, kind: str, out: str | os.PathLike) -> None:
    """KenLM's build_binary of ``arpa`` into ``out`` (written beside it, renamed when complete)."""
    if kind not in KINDS:
        raise ValueError(f"KenLM binary kind {kind!r}: one of {', '.join(KINDS)}")
    with atomic_path(out) as tmp:
        r = procs.run([str(program("build_binary")), kind, str(arpa), tmp], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{arpa}: KenLM build_binary {kind} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")


@dataclass
class PeerRun:
    queries: int
    wall_s: float
    cpu_s: float
    log10_sum: float
    rss_max_bytes: int | None
    minor_faults: int | None = None  # the process's minor page faults (all at load: ~1 per 2 MiB on huge pages)


class KenlmPeer:
    """One KenLM binary model and its id stream of a document (a temporary file, removed by ``close``)."""

    def __init__(self, kind: str, model: str | os.PathLike, lines: list[str], repeats: int, workdir: str | None = None):
        self.kind, self.model = kind, Path(model)
        if not self.model.exists():
            raise FileNotFoundError(f"{self.model}: no KenLM {kind} binary")
        self.nbytes = self.model.stat().st_size
        self._dir = tempfile.mkdtemp(prefix="smtbench-kenlm-", dir=workdir)
        text = os.path.join(self._dir, "text")
        with atomic_open(text) as fh:
            for _ in range(repeats):
                for line in lines:
                    fh.write(line + "\n")
        self.ids = os.path.join(self._dir, "ids")
        with open(text, "rb") as src, open(self.ids, "wb") as dst:
            r = procs.run([str(program("kenlm_benchmark")), "-v", "-m", str(self.model)], stdin=src,
                          stdout=dst, stderr=subprocess.PIPE, text=False)
        if r.returncode != 0:
            raise RuntimeError(f"{self.model}: kenlm_benchmark -v failed: {r.stderr.decode(errors='replace')[-2000:]}")
        os.unlink(text)

    def query(self, threads: int = 1) -> PeerRun:
        # page in the ids and the model as its usage says, then the timed query
        for p in (self.ids, self.model):
            with open(p, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        import resource

        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
        with open(self.ids, "rb") as src:
            r = procs.run([str(program("kenlm_benchmark")), "-q", "-t", str(threads), "-m", str(self.model)],
                          stdin=src, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{self.model}: kenlm_benchmark -q failed: {r.stderr.strip()[-2000:]}")
        out = parse_query_output(r.stdout, r.stderr, str(self.model))
        # the waited-for child's faults (no other child ends meanwhile: the peer runs alone in its point)
        out.minor_faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
        return out

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def parse_query_output(stdout: str, stderr: str, where: str) -> PeerRun:
    def grab(pattern: str, text: str) -> re.Match:
        m = re.search(pattern, text)
        if not m:
            raise RuntimeError(f"{where}: kenlm_benchmark printed no {pattern!r}:\n{stdout}\n{stderr}")
        return m
    q = int(grab(r"Queries: (\d+)", stdout).group(1))
    m = grab(r"Excluding load, CPU: ([0-9.eE+-]+) Wall: ([0-9.eE+-]+)", stdout)
    s = float(grab(r"Probability sum: ([0-9.eE+-]+)", stderr).group(1))
    rss = re.search(r"RSSMax: (\d+)", stdout)
    return PeerRun(q, float(m.group(2)), float(m.group(1)), s, int(rss.group(1)) if rss else None)


def parse_binaries(specs: list[str]) -> dict[str, str]:
    """``--kenlm-binary KIND=PATH`` options -> {kind: path}."""
    out = {}
    for spec in specs:
        kind, sep, path = spec.partition("=")
        if not sep or not path or kind not in KINDS:
            raise ValueError(f"--kenlm-binary {spec!r}: want KIND=PATH with KIND one of {', '.join(KINDS)}")
        out[kind] = path
    return out


HASH_BENCHMARK = "probing_hash_table_benchmark"
HASH_INCLUDES = ("KenLM's util/probing_hash_table_benchmark (its ProbingHashTable of 8-byte keys, IdentityHash, "
                 "Power2Mod, huge pages; its Immediate and PrefetchQueue 2/4/8/16), patched by "
                 "tools/kenlm-probing-benchmark.patch to run one table size on one thread: filled once with random "
                 "keys per process, then the same random misses through each queue, timed by its CPUTime() "
                 "(CLOCK_PROCESS_CPUTIME_ID of its one-thread process: CPU time)")


@dataclass
class HashPeerRun:
    entries: int
    table_bytes: int
    insert_ns: float
    ns_per_lookup: dict[int, float]  # queue size (0 = Immediate) -> CPU ns per lookup


@functools.lru_cache(maxsize=None)
def _usage(prog: Path, mtime_ns: int) -> bytes:
    """The patch's usage string in the program (read once per build): b"" for KenLM's unpatched program."""
    data = prog.read_bytes()
    i = data.find(b"[ENTRIES LOOKUPS")
    return data[i:data.find(b"\0", i)] if i >= 0 else b""


def hash_program(seeded: bool = False) -> Path:
    """KenLM's hash benchmark, refused unless it is the patched build: the unpatched program ignores its arguments
    and runs KenLM's whole multi-thread sweep up to half the machine's memory. ``seeded``: the patch's revision that
    takes a SEED (a SplitMix64 stream instead of /dev/urandom: `smtbench count`)."""
    prog = program(HASH_BENCHMARK)
    usage = _usage(prog, prog.stat().st_mtime_ns)
    if not usage or (seeded and b"[SEED]" not in usage):
        what = "the one-size build" if not usage else "the build that takes a SEED"
        raise FileNotFoundError(f"{prog}: not {what} (tools/kenlm-probing-benchmark.patch): rebuild with "
                                "`bash tools/build_lmplz.sh`")
    return prog


def hash_benchmark(entries: int, lookups: int) -> HashPeerRun:
    """One run of KenLM's hash benchmark (one-size mode): a table of KenLM's Size(entries), ``lookups`` misses."""
    prog = hash_program()
    r = procs.run([str(prog), str(entries), str(lookups)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{prog} {entries} {lookups}: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    head = re.search(r"^entries (\d+) bytes (\d+) insert_ns ([0-9.e+-]+)$", r.stdout, re.M)
    queues = {int(q): float(ns) for q, ns in re.findall(r"^queue (\d+) ns_per_lookup ([0-9.e+-]+)$", r.stdout, re.M)}
    if not head or sorted(queues) != [0, 2, 4, 8, 16]:
        raise RuntimeError(f"{prog}: unexpected output (not the patched one-size mode?): {r.stdout[:400]!r}")
    return HashPeerRun(int(head.group(1)), int(head.group(2)), float(head.group(3)), queues)
