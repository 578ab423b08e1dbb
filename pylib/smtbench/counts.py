"""Counts that do not move with the weather (issue 42): instructions, data accesses, simulated cache misses and
mispredicted branches per unit of work, under callgrind, for fixed named points of our kernels and of a peer.

How a point is counted. Ours: one process per group of points (one table or model, built once),
``valgrind --tool=callgrind --instr-atstart=no`` with the pinned geometry of :data:`VALGRIND_ARGS` (the same on every
machine), Python driving the kernels through cffi (``python -m smtbench.counts drive GROUP``). Nothing is
instrumented until a region begins: ``sb_cg_begin`` (csrc/util/cgregion.c, callgrind.h's client requests) starts
instrumenting, reads a 16 MiB buffer (so every region starts with the simulated caches holding none of the kernel's
data, whatever point ran before it) and zeroes the counters; the kernel's one C call runs; ``sb_cg_end`` stops
instrumenting and dumps the region to its own file, named by the point. A region holds the C call plus cffi's call
path (a few hundred instructions). The peer (KenLM's ``kenlm_benchmark -q -t 1``, a C++ process without client
requests) runs fully instrumented with collection toggled on only inside its worker thread's loop
(``--toggle-collect`` of the thread's ``run()``: the scoring loop, its float sum and the buffer hand-over), so its
caches are warm with whatever loading left in them. No one-line-input subtraction is used anywhere.

Debian 12's valgrind (3.19) stops with SIGILL on AVX-512, which ``-march=native`` emits: counts come from the
portable build (SMTBENCH_NATIVE=0); a native build is refused.

Units: ``lookup`` (hash), ``query`` (one scored word incl. ``</s>``: LM, B-tree, KenLM), ``source word``
(decoders: the words of the decoded input sentences). Metrics per unit:
``ir`` (instructions), ``dr``/``dw`` (data reads/writes), ``d1_miss`` (D1mr+D1mw), ``ll_miss`` (DLmr+DLmw),
``br_miss`` (Bcm+Bim).
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from . import procs
from .ioutil import words as split_words
from .ioutil import read_lines

#: the simulated caches: the same on every machine (a count must not depend on the host's caches)
GEOMETRY = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "8388608,16,64"}
VALGRIND_ARGS = ["--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
                 *(f"--{k}={v}" for k, v in GEOMETRY.items())]
#: metric -> callgrind events summed
METRICS: dict[str, tuple[str, ...]] = {"ir": ("Ir",), "dr": ("Dr",), "dw": ("Dw",), "d1_miss": ("D1mr", "D1mw"),
                                       "ll_miss": ("DLmr", "DLmw"), "br_miss": ("Bcm", "Bim")}
DEFAULT_TOLERANCE = 0.02
EVICT_BYTES = 16 << 20  # > the simulated LL (8 MiB, 16-way LRU): a region starts with none of the kernel's lines
HASH_LOOKUPS = 100_000
DECODE_SENTENCES = {"cube": 10, "normal": 3}  # under callgrind a normal-search sentence costs ~8 cube ones
CSV_COLUMNS = ["point", "system", "kernel", "unit", "metric", "per_unit"]
BASELINE_COLUMNS = [*CSV_COLUMNS, "tolerance"]


class CountError(ValueError):
    """Bad input to `smtbench count` (an option, a baseline line, a missing tool): one line, exit 2."""


@dataclass(frozen=True)
class Point:
    name: str
    group: str  # one process: the table or model the group's points share
    system: str  # ours | kenlm
    kernel: str  # the C function (or the peer's program) counted
    unit: str
    what: str


def _hash_points(mib: int) -> list[Point]:
    return [Point(f"hash-kv-{mib}mib-q{q}", f"hash-{mib}mib", "ours", "sb_hash_find_batch", "lookup",
                  f"kv table of {mib} MiB (pow2, load 2/3, fixed seed), {HASH_LOOKUPS} lookups (half hits), "
                  + ("plain" if q == 0 else f"prefetch queue {q}")) for q in (0, 16)]


POINTS: list[Point] = [
    *_hash_points(1),  # inside the simulated LL
    *_hash_points(64),  # 8x the simulated LL: misses show
    Point("lm-o5-sequential", "lm-o5", "ours", "sb_lm_score_stream", "query",
          "the oracle's 5-gram (lm-en5.arpa.xz, a 38 MiB probing table) on dev.en, sequential"),
    Point("lm-o5-automaton-q8", "lm-o5", "ours", "sb_lm_score_stream", "query",
          "the oracle's 5-gram on dev.en, the automaton with a queue of 8"),
    Point("btree-o5-k31", "lm-o5", "ours", "sb_btree_query_ex", "query",
          "the oracle's 5-gram as a B-tree (node size 31, 25 MiB), dev.en's queries, interleave 8, one thread"),
    Point("cube-p400-s400", "decode", "ours", "sb_pb_decode_cube", "source word",
          f"cube pruning (pop limit 400, stack 400: Moses2's m2-cube400) with the oracle's model on the first "
          f"{DECODE_SENTENCES['cube']} sentences of dev.es"),
    Point("normal-s100", "decode", "ours", "sb_pb_decode_normal", "source word",
          f"the normal stack search (stack 100) with the oracle's model on the first {DECODE_SENTENCES['normal']} "
          f"sentences of dev.es"),
    Point("kenlm-probing-o5", "kenlm-o5", "kenlm", "kenlm_benchmark", "query",
          "KenLM's probing binary of the same ARPA, kenlm_benchmark -q -t 1 on dev.en's ids (worker loop only)"),
]
BY_NAME = {p.name: p for p in POINTS}
GROUPS = sorted({p.group for p in POINTS})
ORACLE_GROUPS = {"lm-o5", "kenlm-o5", "decode"}


def default_oracle() -> Path:
    shared = os.environ.get("SMTBENCH_SHARED") or Path(__file__).resolve().parents[2].parent / "shared"
    return Path(shared) / "oracles" / "moses-bible-dev"


def select(spec: str) -> list[Point]:
    """'all', or a comma list of point and group names."""
    if spec == "all":
        return list(POINTS)
    out: list[Point] = []
    for name in (s.strip() for s in spec.split(",") if s.strip()):
        hit = [p for p in POINTS if name in (p.name, p.group)]
        if not hit:
            raise CountError(f"--points {spec!r}: unknown point {name!r} (points: {', '.join(BY_NAME)}; "
                             f"groups: {', '.join(GROUPS)})")
        out += [p for p in hit if p not in out]
    if not out:
        raise CountError(f"--points {spec!r}: no point named")
    return out


# ---- the driver: runs under valgrind, one group per process ----------------------------------------------------

def _paged(a):
    """A copy of numpy array ``a`` starting on a 4 KiB page: the simulated D1's sets (address bits 6-11) then see
    the same offsets whatever the Python heap held before (paths and environment differ between checkouts)."""
    import numpy as np

    a = np.ascontiguousarray(a)
    raw = np.empty(a.nbytes + 4096, dtype=np.uint8)
    off = (-raw.ctypes.data) % 4096
    out = raw[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def _load_extension() -> None:
    """$SMTBENCH_COUNT_EXT names another build of the extension (tests: a build with a deliberate slowdown)."""
    path = os.environ.get("SMTBENCH_COUNT_EXT")
    if path:
        import importlib.util

        spec = importlib.util.spec_from_file_location("smtbench._native", path)
        if spec is None or spec.loader is None:
            raise CountError(f"SMTBENCH_COUNT_EXT={path}: not a loadable extension")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["smtbench._native"] = mod
        spec.loader.exec_module(mod)


#: a point's measured call (returns its unit count) and its checksum (computed after the region ends)
Driven = tuple[Callable[[], int], Callable[[], str]]


def _prepare_hash(mib: int) -> dict[str, Driven]:
    import numpy as np

    from .hash.table import ProbingHashTable
    from .native import as_ptr, check, lib

    rng = np.random.default_rng(20261128 + mib)
    t, cap = ProbingHashTable.for_bytes(mib << 20, 2 / 3, "pow2", "kv", huge=False)
    keys = np.unique(rng.integers(1, 2**63, size=cap, dtype=np.uint64))
    t.insert(keys, keys * np.uint64(3))
    q = np.concatenate([rng.choice(keys, size=HASH_LOOKUPS // 2),
                        rng.integers(2**63, 2**64 - 1, size=HASH_LOOKUPS - HASH_LOOKUPS // 2, dtype=np.uint64)])
    rng.shuffle(q)
    q = _paged(q)
    values = _paged(np.zeros(len(q), dtype=np.uint64))
    found = _paged(np.zeros(len(q), dtype=np.uint8))
    kp, vp, fp = as_ptr("uint64_t *", q), as_ptr("uint64_t *", values), as_ptr("uint8_t *", found)
    find = lib.sb_hash_find_batch
    keep = (t, q, values, found)  # the closure holds the objects that own the memory

    def point(queue: int) -> Driven:
        def run() -> int:
            check(find(keep[0]._t, kp, len(q), queue, vp, fp), "hash find")
            return len(q)
        return run, lambda: f"{int(found.sum())}:{int(np.bitwise_xor.reduce(values)):x}"

    return {f"hash-kv-{mib}mib-q{qs}": point(qs) for qs in (0, 16)}


def _prepare_lm(oracle: Path) -> dict[str, Driven]:
    import numpy as np

    from .lm.arpa import read_arpa
    from .lm.backends import SENTENCE_MARK
    from .lm.btree import DEFAULT_INTERLEAVE, BTreeLM, stream_queries
    from .lm.probing import ProbingLM
    from .native import as_ptr, check, ffi, lib

    model = read_arpa(oracle / "lm-en5.arpa.xz")
    lm = ProbingLM(model)
    lines = read_lines(oracle / "dev.en")
    tok = _paged(np.asarray(lm.encode(lines).tokens, dtype=np.uint32))
    nq = int(np.count_nonzero((tok & np.uint32(SENTENCE_MARK)) == 0))
    probs, lens = _paged(np.zeros(nq, dtype=np.float32)), _paged(np.zeros(nq, dtype=np.uint8))
    s, qn, ns = ffi.new("double *"), ffi.new("uint64_t *"), ffi.new("uint64_t *")
    tp, pp, lp = as_ptr("uint32_t *", tok), as_ptr("float *", probs), as_ptr("uint8_t *", lens)
    stream = lib.sb_lm_score_stream

    def lm_point(queue: int) -> Driven:
        def run() -> int:
            check(stream(keep[0]._m, tp, len(tok), queue, 0, pp, lp, s, qn, ns), "probing LM scoring")
            return nq
        return run, lambda: f"{int(qn[0])}:{float(s[0]).hex()}"

    bt = BTreeLM(model, 31)
    bq = _paged(bt._check_queries(stream_queries(tok, bt.order)))
    bprob, blen = _paged(np.zeros(len(bq), dtype=np.float32)), _paged(np.zeros(len(bq), dtype=np.uint8))
    bqp, bpp, blp = as_ptr("uint32_t *", bq), as_ptr("float *", bprob), as_ptr("uint8_t *", blen)
    query = lib.sb_btree_query_ex
    keep = (lm, bt, model, tok, bq, probs, lens, bprob, blen)  # the closures hold what owns the memory

    def btree() -> int:
        check(query(keep[1]._t, bqp, len(bq), DEFAULT_INTERLEAVE, 1, 0, bpp, blp), "B-tree query")
        return len(bq)

    return {"lm-o5-sequential": lm_point(0), "lm-o5-automaton-q8": lm_point(8),
            "btree-o5-k31": (btree, lambda: float(bprob.astype(np.float64).sum()).hex())}


def _prepare_decode(oracle: Path) -> dict[str, Driven]:
    import hashlib

    from .decode.cube import CubeDecoder
    from .decode.model import PhraseModel
    from .decode.normal import NormalDecoder
    from .decode.search import check_sentence, entries
    from .native import check, ffi, lib

    model = PhraseModel(oracle / "moses.ini")
    lines = read_lines(oracle / "dev.es")
    out, counters = ffi.new("sb_pb_result **"), ffi.new("sb_pb_counters *")

    def point(dec: Any, n: int) -> Driven:
        texts = [check_sentence(line, f"{oracle}/dev.es:{i + 1}") for i, line in enumerate(lines[:n])]
        words = sum(len(split_words(t)) for t in texts)
        results: list[Any] = []
        decode = dec.decode

        def run() -> int:
            for t in texts:
                check(decode(t, out, counters, ffi.NULL), "decoding")
                results.append(out[0])
            return words

        def checksum() -> str:
            best = [entries(ffi.gc(r, lib.sb_pb_result_free))[0].text for r in results]
            return hashlib.sha1("\n".join(best).encode()).hexdigest()[:16]
        return run, checksum

    return {"cube-p400-s400": point(CubeDecoder(model, pop_limit=400, stack_size=400), DECODE_SENTENCES["cube"]),
            "normal-s100": point(NormalDecoder(model, stack_size=100), DECODE_SENTENCES["normal"])}


def drive(group: str, out: str, oracle: Path) -> int:
    """Under valgrind: prepare the group's points uninstrumented, then count each inside its own region."""
    import gc

    _load_extension()
    import numpy as np

    from .native import as_ptr, buildinfo, ffi, lib

    if buildinfo().get("native") or "-march=native" in buildinfo()["cflags_compiled"]:
        raise CountError("counts need the portable build (SMTBENCH_NATIVE=0): valgrind 3.19 stops on AVX-512")
    if not lib.sb_cg_available():
        raise CountError("this build of the extension has no callgrind client requests (valgrind/callgrind.h "
                         "was absent when it was compiled): install valgrind and rebuild")
    if group.startswith("hash-"):
        points = _prepare_hash(int(group.removeprefix("hash-").removesuffix("mib")))
    elif group == "lm-o5":
        points = _prepare_lm(oracle)
    elif group == "decode":
        points = _prepare_decode(oracle)
    else:
        raise CountError(f"no driver for group {group!r}")
    evict = _paged(np.ones(EVICT_BYTES, dtype=np.uint8))
    ep, sink = as_ptr("uint8_t *", evict), ffi.new("uint64_t *")
    begin, end = lib.sb_cg_begin, lib.sb_cg_end
    done: dict[str, dict[str, Any]] = {}
    gc.collect()
    gc.disable()
    for name, (run, checksum) in points.items():
        cname = ffi.new("char[]", name.encode())
        begin(ep, EVICT_BYTES, sink)
        units = run()
        end(cname)
        done[name] = {"units": units, "checksum": checksum()}
    gc.enable()
    Path(out).write_text(json.dumps(done))
    return 0


# ---- the parent: valgrind processes, callgrind files, rows -----------------------------------------------------

def parse_callgrind(path: str | Path) -> tuple[str, dict[str, int]]:
    """(trigger description, {event: total}) of one callgrind output file (:func:`read_callgrind`)."""
    desc, totals, _ = read_callgrind(path)
    return desc, totals


def metrics_of(events: dict[str, int]) -> dict[str, int]:
    return {m: sum(events.get(e, 0) for e in evs) for m, evs in METRICS.items()}


def _valgrind() -> str:
    v = shutil.which("valgrind")
    if not v:
        raise CountError("valgrind is not installed (Debian: apt-get install valgrind; `make test` installs it)")
    return v


def valgrind_version() -> str:
    return procs.run([_valgrind(), "--version"], capture_output=True, text=True).stdout.strip()


def _driver_env(argv: list[str]) -> dict[str, str]:
    """The driver's environment: Python's hash seed fixed, glibc's mmap threshold fixed (no dynamic threshold: every
    allocation of 64 KiB or more, the kernels' own included, is page-aligned), and the strings at the top of the
    stack padded to one length (SMTBENCH_COUNT_PAD), so that the stack's offset in its page does not follow the
    length of the checkout's paths."""
    env = {k: v for k, v in os.environ.items() if k != "SMTBENCH_COUNT_PAD"}
    env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MALLOC_MMAP_THRESHOLD_="65536")
    used = sum(len(a.encode()) + 1 for a in argv) + len(os.fsencode(sys.executable)) + 1
    used += sum(len(k.encode()) + len(v.encode()) + 2 for k, v in env.items()) + len("SMTBENCH_COUNT_PAD=") + 1
    used += 8 * (len(env) + 1 + len(argv) + 2)  # envp, argv and argc below the strings (the pad included)
    env["SMTBENCH_COUNT_PAD"] = "x" * ((-used) % 4096)
    return env


def _run_ours(group: str, points: list[Point], tmp: Path, oracle: Path, keep: Path | None) -> dict[str, dict]:
    out_json, cg = tmp / f"{group}.json", tmp / f"{group}.callgrind"
    env = _driver_env([sys.executable, "-m", "smtbench.counts", "drive", group, str(out_json), str(oracle)])
    cmd = [_valgrind(), *VALGRIND_ARGS, "--instr-atstart=no", f"--callgrind-out-file={cg}",
           sys.executable, "-m", "smtbench.counts", "drive", group, str(out_json), str(oracle)]
    r = procs.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        tail = " | ".join([line for line in r.stderr.splitlines() if not line.startswith("==")][-5:])
        raise CountError(f"count group {group}: the driver under valgrind failed (exit {r.returncode}): {tail}")
    info = json.loads(out_json.read_text())
    found: dict[str, dict] = {}
    for f in sorted(tmp.glob(f"{group}.callgrind*")):
        desc, ev = parse_callgrind(f)
        m = re.match(r"Client Request: (.+)$", desc)
        if m and m.group(1) in info:
            name = m.group(1)
            found[name] = {**info[name], "events": ev}
            if keep:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, keep / f"{name}.callgrind")
    missing = [p.name for p in points if p.name not in found]
    if missing:
        raise CountError(f"count group {group}: no callgrind dump for {', '.join(missing)}")
    return found


def _run_kenlm(oracle: Path, workdir: Path, tmp: Path, keep: Path | None) -> dict[str, dict] | None:
    from .lm import kenlm_peer

    try:
        prog = kenlm_peer.program("kenlm_benchmark")
    except FileNotFoundError:
        return None
    workdir.mkdir(parents=True, exist_ok=True)
    binary, ids = workdir / "lm-en5.probing", workdir / "dev.en.kenlm-ids"
    arpa = oracle / "lm-en5.arpa.xz"
    if not binary.exists() or binary.stat().st_mtime < arpa.stat().st_mtime:
        kenlm_peer.build_binary(arpa, "probing", binary)
    if not ids.exists() or ids.stat().st_mtime < binary.stat().st_mtime:
        with open(oracle / "dev.en", "rb") as src, open(ids, "wb") as dst:
            procs.run([str(prog), "-v", "-m", str(binary)], stdin=src, stdout=dst, check=True,
                           stderr=subprocess.DEVNULL)
    cg = tmp / "kenlm.callgrind"
    argv = [str(prog), "-q", "-t", "1", "-m", str(binary)]
    with open(ids, "rb") as src:
        r = procs.run([_valgrind(), *VALGRIND_ARGS, "--toggle-collect=*thread_data*RecyclingHandler*::run()",
                            f"--callgrind-out-file={cg}", *argv], stdin=src, capture_output=True, text=True,
                           env=_driver_env(argv))
    if r.returncode != 0:
        raise CountError(f"kenlm_benchmark under valgrind failed (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    run = kenlm_peer.parse_query_output(r.stdout, r.stderr, str(binary))
    _, ev = parse_callgrind(cg)
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cg, keep / "kenlm-probing-o5.callgrind")
    return {"kenlm-probing-o5": {"units": run.queries, "checksum": repr(run.log10_sum), "events": ev}}


def count(points: list[Point], oracle: Path, workdir: Path, keep: Path | None = None,
          progress: bool = False) -> list[dict[str, Any]]:
    """Count every point (in group order); a peer that is not built gives a row with ``not_built``."""
    results: list[dict[str, Any]] = []
    groups = [g for g in GROUPS if any(p.group == g for p in points)]
    if any(g in ORACLE_GROUPS for g in groups) and not (oracle / "lm-en5.arpa.xz").exists():
        raise CountError(f"--oracle {oracle}: no lm-en5.arpa.xz there (the LM points count the Moses oracle's 5-gram; "
                         f"set --oracle or SMTBENCH_SHARED, or leave out {', '.join(sorted(ORACLE_GROUPS))})")
    with tempfile.TemporaryDirectory(prefix="smtbench-count-") as td:
        tmp = Path(td)
        for g in groups:
            pts = [p for p in points if p.group == g]
            if progress:
                print(f"count: {g} ({', '.join(p.name for p in pts)})", file=sys.stderr, flush=True)
            if g == "kenlm-o5":
                got = _run_kenlm(oracle, workdir, tmp, keep)
            else:
                got = _run_ours(g, pts, tmp, oracle, keep)
            for p in pts:
                r = (got or {}).get(p.name)
                row: dict[str, Any] = {"point": p.name, "group": p.group, "system": p.system, "kernel": p.kernel,
                                       "unit": p.unit, "what": p.what}
                if r is None:
                    row["not_built"] = True
                else:
                    m = metrics_of(r["events"])
                    row.update(units=r["units"], checksum=r["checksum"], **m,
                               **{f"{k}_per_unit": v / r["units"] for k, v in m.items()},
                               events=r["events"])
                results.append(row)
    return results


def write_outputs(results: list[dict[str, Any]], rows: str | None, table: str | None) -> None:
    from .benchutil import RowWriter
    from .ioutil import atomic_open

    if rows:
        with atomic_open(rows) as fh:
            w = RowWriter("counts", fh, fixed={"valgrind": valgrind_version(), "geometry": GEOMETRY,
                                                "instrumentation": "client requests around the C call "
                                                "(ours); --toggle-collect of the worker loop (kenlm)"})
            for r in results:
                w.emit(**r)
    if table:
        with atomic_open(table) as fh:
            out = csv.writer(fh, lineterminator="\n")
            out.writerow(CSV_COLUMNS)
            for r in results:
                if r.get("not_built"):
                    continue
                for m in METRICS:
                    out.writerow([r["point"], r["system"], r["kernel"], r["unit"], m, f"{r[m + '_per_unit']:.6g}"])


# ---- the gate ---------------------------------------------------------------------------------------------------

def read_table(path: str | Path, baseline: bool = False) -> dict[tuple[str, str], dict[str, str]]:
    want = BASELINE_COLUMNS if baseline else CSV_COLUMNS
    try:
        fh = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise CountError(f"{path}: cannot read ({exc.strerror})") from None
    out: dict[tuple[str, str], dict[str, str]] = {}
    with fh:
        rd = csv.DictReader(fh)
        missing = [c for c in want if c not in (rd.fieldnames or [])]
        if missing:
            raise CountError(f"{path}:1: missing columns {', '.join(missing)} (want {','.join(want)})")
        for i, row in enumerate(rd, start=2):
            try:
                float(row["per_unit"])
                if baseline:
                    float(row["tolerance"])
            except (TypeError, ValueError):
                raise CountError(f"{path}:{i}: per_unit/tolerance is not a number: {row}") from None
            if row["metric"] not in METRICS:
                raise CountError(f"{path}:{i}: unknown metric {row['metric']!r} ({', '.join(METRICS)})")
            key = (row["point"], row["metric"])
            if key in out:
                raise CountError(f"{path}:{i}: {key[0]} {key[1]} given twice")
            out[key] = row
    return out


@dataclass
class Verdict:
    regressions: list[str]  # one line each: the gate fails on any
    notes: list[str]  # improvements, missing peers, new points: reported only
    table: list[dict[str, Any]]


def check(current: str | Path, baseline: str | Path) -> Verdict:
    cur, base = read_table(current), read_table(baseline, baseline=True)
    regressions, notes, table = [], [], []
    for key in sorted(set(cur) | set(base)):
        c, b = cur.get(key), base.get(key)
        point, metric = key
        if b is None:
            notes.append(f"new count (not in the baseline): {point} {metric} = {c['per_unit']}")  # type: ignore
            continue
        unit, tol = b["unit"], float(b["tolerance"])
        row = {"point": point, "kernel": b["kernel"], "metric": metric, "unit": unit,
               "baseline": float(b["per_unit"]), "value": None, "tolerance": tol, "status": "ok"}
        if c is None:
            if b["system"] == "ours":
                row["status"] = "MISSING"
                regressions.append(f"count missing: {point} ({b['kernel']}) {metric} per {unit}: baseline "
                                   f"{b['per_unit']}, no count in this run")
            else:
                row["status"] = "missing"
                notes.append(f"peer count missing (not built?): {point} {metric}")
            table.append(row)
            continue
        v, bv = float(c["per_unit"]), float(b["per_unit"])
        row["value"] = v
        rel = (v / bv - 1) if bv else (0.0 if v == 0 else float("inf"))
        if rel > tol:
            row["status"] = "REGRESSION"
            regressions.append(f"count regression: {point} ({b['kernel']}) {metric} per {unit}: baseline "
                               f"{b['per_unit']}, now {c['per_unit']} ({rel:+.1%}, tolerance {tol:.0%})")
        elif rel < -tol:
            row["status"] = "improved"
            notes.append(f"count fell: {point} {metric} per {unit}: baseline {b['per_unit']}, now {c['per_unit']} "
                         f"({rel:+.1%}): update the baseline in the commit that did it")
        table.append(row)
    return Verdict(regressions, notes, table)


def update_baseline(current: str | Path, baseline: str | Path) -> int:
    """Write ``current`` as the baseline, keeping each existing row's tolerance (new rows: 2%)."""
    from .ioutil import atomic_open

    cur = read_table(current)
    old = read_table(baseline, baseline=True) if Path(baseline).exists() else {}
    with atomic_open(baseline) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(BASELINE_COLUMNS)
        for key, r in cur.items():
            tol = old[key]["tolerance"] if key in old else f"{DEFAULT_TOLERANCE:g}"
            w.writerow([r[c] for c in CSV_COLUMNS] + [tol])
    return len(cur)


def plot(v: Verdict, path: str | Path) -> None:
    """Each count of this run over its baseline (1 = unchanged), the tolerance as a band; regressions red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .report.common import save_figure

    rows = [r for r in v.table if r["value"] is not None and r["baseline"]]
    metrics = list(METRICS)
    points = sorted({r["point"] for r in rows})
    fig, axes = plt.subplots(1, len(metrics), figsize=(3 * len(metrics), 0.35 * len(points) + 1.8), sharey=True,
                             squeeze=False)
    for ax, m in zip(axes[0], metrics):
        rs = {r["point"]: r for r in rows if r["metric"] == m}
        ys = [i for i, p in enumerate(points) if p in rs]
        xs = [rs[points[i]]["value"] / rs[points[i]]["baseline"] for i in ys]
        tol = max((rs[points[i]]["tolerance"] for i in ys), default=DEFAULT_TOLERANCE)
        ax.axvspan(1 - tol, 1 + tol, color="0.9")
        ax.axvline(1, color="0.5", lw=0.8)
        ax.scatter(xs, ys, c=["tab:red" if rs[points[i]]["status"] == "REGRESSION" else "tab:blue" for i in ys], s=18)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("this run / baseline", fontsize=8)
    axes[0][0].set_yticks(range(len(points)), points, fontsize=7)
    fig.suptitle(f"counts per unit against the baseline: {len(v.regressions)} regression(s)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


def write_report(v: Verdict, path: str | Path, baseline: str) -> None:
    from .ioutil import atomic_open

    with atomic_open(path) as fh:
        fh.write(f"# Counts against {baseline}\n\n{len(v.regressions)} regression(s) (a count per unit above its "
                 f"baseline by more than its tolerance fails the run); simulated caches {GEOMETRY}.\n\n")
        for line in v.regressions + v.notes:
            fh.write(f"- {line}\n")
        fh.write("\n| point | kernel | metric | unit | baseline | this run | change | status |\n"
                 "|---|---|---|---|---|---|---|---|\n")
        for r in v.table:
            ch = f"{r['value'] / r['baseline'] - 1:+.3%}" if r["value"] is not None and r["baseline"] else ""
            val = "" if r["value"] is None else f"{r['value']:.6g}"
            fh.write(f"| {r['point']} | {r['kernel']} | {r['metric']} | {r['unit']} | {r['baseline']:.6g} | {val} | "
                     f"{ch} | {r['status']} |\n")


# ---- per-function diff ------------------------------------------------------------------------------------------

_NAMED = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")


def function_costs(path: str | Path) -> dict[str, int]:
    """{function: self instructions} of a callgrind output file (:func:`read_callgrind`)."""
    if not Path(path).is_file():
        raise CountError(f"{path}: no such callgrind output file")
    return read_callgrind(path)[2]


def read_callgrind(path: str | Path) -> tuple[str, dict[str, int], dict[str, int]]:
    """The one reader of a callgrind output file: (trigger description, {event: total}, {function: self
    instructions}). The functions' costs are read directly (callgrind_annotate 3.19 sums a dump's garbled
    ``summary:`` line after CALLGRIND_ZERO_STATS): the cost lines under each ``fn=``, leaving out the line after
    each ``calls=`` (a call's inclusive cost)."""
    names: dict[str, str] = {}
    events: list[str] = []
    desc, totals = "", None
    out: dict[str, int] = {}
    fn, skip = "", False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("desc: Trigger:"):
                desc = line.split(":", 2)[2].strip()
            elif line.startswith("totals:"):
                totals = [int(x) for x in line.split()[1:]]
            elif line.startswith("summary:") and totals is None:
                totals = [int(x) for x in line.split()[1:]]
            elif line.startswith("fn="):
                m = _NAMED.match(line[3:].strip())
                if m:
                    if m.group(2):
                        names[m.group(1)] = m.group(2)
                    fn = names.get(m.group(1), m.group(1))
                else:
                    fn = line[3:].strip()
            elif line.startswith("calls="):
                skip = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if fn and len(parts) >= 2 and events and events[0] == "Ir":
                    out[fn] = out.get(fn, 0) + int(parts[1])
            elif line.startswith("cfn="):  # defines a compressed name too
                m = _NAMED.match(line[4:].strip())
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
    if not events or totals is None:
        raise CountError(f"{path}: not a callgrind output file (no events/totals line)")
    return desc, {e: (totals[i] if i < len(totals) else 0) for i, e in enumerate(events)}, out


def diff(a: str | Path, b: str | Path, top: int = 15) -> list[str]:
    """Lines naming the functions whose instructions moved most from ``a`` to ``b`` (callgrind output files, or two
    folders of `count --callgrind-dir`, compared file by file)."""
    pa, pb = Path(a), Path(b)
    if pa.is_dir() and pb.is_dir():
        pairs = [(f, pb / f.name) for f in sorted(pa.glob("*.callgrind")) if (pb / f.name).exists()]
        if not pairs:
            raise CountError(f"{a} and {b}: no callgrind file of the same name in both")
    else:
        pairs = [(pa, pb)]
    lines: list[str] = []
    for fa, fb in pairs:
        ca, cb = function_costs(fa), function_costs(fb)
        ta, tb = sum(ca.values()), sum(cb.values())
        lines.append(f"{fa.name if pa.is_dir() else fa} -> {fb.name if pa.is_dir() else fb}: Ir {ta:,} -> {tb:,} "
                     f"({(tb / ta - 1) if ta else 0:+.2%})")
        moved = sorted(set(ca) | set(cb), key=lambda f: -abs(cb.get(f, 0) - ca.get(f, 0)))
        for f in moved[:top]:
            d = cb.get(f, 0) - ca.get(f, 0)
            if d == 0:
                break
            lines.append(f"  {d:+,} Ir  {ca.get(f, 0):,} -> {cb.get(f, 0):,}  {f}")
    return lines


if __name__ == "__main__":  # the driver under valgrind: python -m smtbench.counts drive GROUP OUT_JSON ORACLE
    if len(sys.argv) != 5 or sys.argv[1] != "drive":
        sys.exit("usage: python -m smtbench.counts drive GROUP OUT_JSON ORACLE_DIR")
    sys.exit(drive(sys.argv[2], sys.argv[3], Path(sys.argv[4])))
