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
caches are warm with whatever loading left in them; ``kenlm-probing-o5`` and ``kenlm-trie-o5`` (the B-tree's peer)
count it on KenLM's probing and trie binaries. KenLM's hash benchmark (``probing_hash_table_benchmark ENTRIES LOOKUPS
SEED``, tools/kenlm-probing-benchmark.patch: SplitMix64 keys instead of /dev/urandom, a 16 MiB read before each
queue) runs fully instrumented too, collecting only inside each queue's ``LookupNs`` and dumping before each read, one
dump per queue; our ``hash-keys-*`` points run our 'keys' layout on the same keys and queries. :data:`PAIRS` names
each point of ours with the peer's point on the same input (the rows' and the table's ``pair``). Moses2 (the
decoders' peer) is counted like kenlm_benchmark: collection toggled on inside ``Moses2::TranslationTask::Run()``
(one call per sentence: decoding and writing the 1-best), loading not collected. Moses' ``score`` (twice: direct,
``--Inverse``) and ``consolidate``, the scoring peer, are counted whole (their loading is the lex tables, which our
scoring point's region loads too); so is Moses' ``lexical-reordering-score``, the peer of our reordering point. No one-line-input subtraction is used anywhere.

Debian 12's valgrind (3.19) stops with SIGILL on AVX-512, which ``-march=native`` emits: counts come from the
portable build (SMTBENCH_NATIVE=0); a native build is refused.

Units: ``lookup`` (hash), ``query`` (one scored word incl. ``</s>``: LM, B-tree, KenLM), ``source word``
(decoders, Moses2: the words of the decoded input sentences), ``extract line`` (phrase scoring, Moses' score),
``orientation line`` (reordering tables: ours, Moses' lexical-reordering-score).
Metrics per unit: ``ir`` (instructions), ``dr``/``dw`` (data reads/writes), ``d1_miss`` (D1mr+D1mw), ``ll_miss``
(DLmr+DLmw), ``br_miss`` (Bcm+Bim).
"""
from __future__ import annotations

import contextlib
import csv
import hashlib
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
#: the scoring points' extract: the oracle's first aligned training pairs, 16,678 extract lines (884 KB) -- under one
#: read chunk (phrase_score.c's CHUNK, 1 MiB), so the scorer's reader thread hands its one worker a single chunk and
#: the two threads' interleaving does not move the counts (500 pairs, 5 chunks, moved br_miss 0.16% between runs)
SCORE_SENTENCES = 100
CSV_COLUMNS = ["point", "system", "kernel", "unit", "metric", "per_unit"]
BASELINE_COLUMNS = [*CSV_COLUMNS, "tolerance"]
TABLE_COLUMNS = [*CSV_COLUMNS, "pair"]  # what --csv writes: "pair" = pair_of(point) (optional when read)


class CountError(ValueError):
    """Bad input to `smtbench count` (an option, a baseline line, a missing tool): one line, exit 2."""


@dataclass(frozen=True)
class Point:
    name: str
    group: str  # one process: the table or model the group's points share
    system: str  # ours | kenlm | moses2 | moses
    kernel: str  # the C function (or the peer's program) counted
    unit: str
    what: str


def _hash_points(mib: int) -> list[Point]:
    return [Point(f"hash-kv-{mib}mib-q{q}", f"hash-{mib}mib", "ours", "sb_hash_find_batch", "lookup",
                  f"kv table of {mib} MiB (pow2, load 2/3, fixed seed), {HASH_LOOKUPS} lookups (half hits), "
                  + ("plain" if q == 0 else f"prefetch queue {q}")) for q in (0, 16)]


#: KenLM's hash benchmark and our 'keys' layout on the same input (the peer pair of the hash table): tables of these
#: MiB (8-byte buckets: inside the simulated LL, 8x it), KenLM's sizing (its benchmark's Size(): 1.5 buckets per entry,
#: a power of two, so buckets / 1.5 entries), SplitMix64(KEYS_SEED) keys: the HASH_LOOKUPS queries first, then the
#: entries (the order KenLM's benchmark draws them), so every query misses and both tables hold the same keys in the
#: same buckets (both are linear probing from key & (buckets - 1))
KEYS_MIB = (1, 64)
KEYS_QUEUES = (0, 16)  # KenLM's Immediate and PrefetchQueue<16>; ours: no queue and a queue of 16
KEYS_SEED = 20261128


def keys_plan(mib: int) -> tuple[int, int]:
    """(buckets, entries) of the 8-byte-key table of ``mib`` MiB, sized as KenLM's hash benchmark sizes it."""
    buckets = (mib << 20) // 8
    return buckets, int(buckets / 1.5)


def splitmix64(seed: int, n: int):
    """The first ``n`` outputs of SplitMix64 seeded with ``seed`` (numpy uint64): the generator of KenLM's hash
    benchmark given a SEED (tools/kenlm-probing-benchmark.patch), output for output."""
    import numpy as np

    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _keys_points(mib: int) -> list[Point]:
    buckets, entries = keys_plan(mib)
    common = (f"{mib} MiB of 8-byte keys ({buckets} buckets, {entries} entries: KenLM's benchmark sizing), keys "
              f"and {HASH_LOOKUPS} missing queries from SplitMix64({KEYS_SEED}) (KenLM's benchmark with SEED: the same "
              f"keys in the same buckets, the same queries); the region starts after a {EVICT_BYTES >> 20} MiB read")
    ours = [Point(f"hash-keys-{mib}mib-q{q}", f"hash-keys-{mib}mib", "ours", "sb_hash_find_batch", "lookup",
                  f"our 'keys' layout, {common}; counted: one sb_hash_find_batch call over the queries "
                  + ("without a queue" if q == 0 else f"with a prefetch queue of {q}")
                  + " (it writes a value and a found flag per query)") for q in KEYS_QUEUES]
    peer = [Point(f"kenlm-hash-{mib}mib-q{q}", f"kenlm-hash-{mib}mib", "kenlm", "probing_hash_table_benchmark",
                  "lookup", f"KenLM's probing_hash_table_benchmark {entries} {HASH_LOOKUPS} {KEYS_SEED} "
                  f"(tools/kenlm-probing-benchmark.patch; ProbingHashTable, IdentityHash, Power2Mod), {common}; "
                  f"counted: its LookupNs<{'Immediate' if q == 0 else f'PrefetchQueue<{q}>'}> (the queue's Add per "
                  f"query, its Drain, two CPUTime() calls; --toggle-collect, one dump per queue)")
            for q in KEYS_QUEUES]
    return ours + peer


POINTS: list[Point] = [
    *_hash_points(1),  # inside the simulated LL
    *_hash_points(64),  # 8x the simulated LL: misses show
    *(p for mib in KEYS_MIB for p in _keys_points(mib)),
    Point("lm-o5-sequential", "lm-o5", "ours", "sb_lm_score_stream", "query",
          "the oracle's 5-gram (lm-en5.arpa.xz, a 38 MiB probing table) on dev.en, sequential"),
    Point("lm-o5-automaton-q8", "lm-o5", "ours", "sb_lm_score_stream", "query",
          "the oracle's 5-gram on dev.en, the automaton with a queue of 8"),
    Point("btree-o5-k31", "lm-o5", "ours", "sb_btree_query_ex", "query",
          "the oracle's 5-gram as a B-tree (node size 31, 25 MiB), dev.en's queries, the library's default "
          "interleave (16), one thread"),
    Point("cube-p400-s400", "decode", "ours", "sb_pb_decode_cube", "source word",
          f"cube pruning (pop limit 400, stack 400: Moses2's m2-cube400) with the oracle's model on the first "
          f"{DECODE_SENTENCES['cube']} sentences of dev.es, one workspace kept across them (as each worker of the "
          f"threaded decoder keeps one; made inside the count)"),
    Point("normal-s100", "decode", "ours", "sb_pb_decode_normal", "source word",
          f"the normal stack search (stack 100) with the oracle's model on the first {DECODE_SENTENCES['normal']} "
          f"sentences of dev.es, one workspace kept across them (as each worker of the threaded decoder keeps one; "
          f"made inside the count)"),
    Point("kenlm-probing-o5", "kenlm-o5", "kenlm", "kenlm_benchmark", "query",
          "KenLM's probing binary of the same ARPA, kenlm_benchmark -q -t 1 on dev.en's ids (worker loop only)"),
    Point("kenlm-trie-o5", "kenlm-trie-o5", "kenlm", "kenlm_benchmark", "query",
          "KenLM's trie binary of the same ARPA (build_binary trie), kenlm_benchmark -q -t 1 on dev.en's ids in "
          "its vocabulary (worker loop only): the B-tree's peer"),
    *(Point(f"moses2-{name}", "moses2", "moses2", "moses2", "source word",
            f"Moses2 ({flags}, -threads 1) on the same {DECODE_SENTENCES[search]} sentences of dev.es as {name}, "
            f"the oracle's model with its tables filtered to the decoded sentences and its LM as KenLM's probing "
            f"binary of the same ARPA; collected only inside Moses2::TranslationTask::Run() (--toggle-collect: "
            f"decoding and writing each sentence, not loading; caches warm with what loading left)")
      for name, search, flags in (("cube-p400-s400", "cube", "-search-algorithm 1 -cube-pruning-pop-limit 400 -s 400"),
                                  ("normal-s100", "normal", "-search-algorithm 0 -s 100"))),
    Point("score-t1", "score", "ours", "sb_pscore", "extract line",
          f"our phrase scoring (smtbench tm score's C core, one thread, 64 MiB): both lex tables loaded, the extract "
          f"parsed into runs, merged by target and by source, the table written; extract and lex tables of the "
          f"oracle's first {SCORE_SENTENCES} aligned training sentence pairs (tm extract, plain files)"),
    Point("tables-t1", "tables", "ours", "sb_extract+sb_pscore", "phrase pair",
          f"our phrase table in one process (smtbench tm extract --phrase-table's C path, one thread, 64 MiB): the "
          f"lexical counts' pass over the same {SCORE_SENTENCES} aligned sentence pairs, the lex tables formatted and "
          f"loaded, the extraction's pass handing each phrase pair to the scorer as a record, the merges, the table "
          f"written (score-t1's table, without its extract file)"),
    Point("reorder-t1", "score", "ours", "sb_reorder", "orientation line",
          f"our reordering table (smtbench tm reorder's C core, csrc/tm/reorder.c): the orientation lines of the "
          f"same {SCORE_SENTENCES} sentence pairs' extraction (tm extract --orientation, plain extract.o) counted per "
          f"distinct pair, sorted, the table written (plain)"),
    Point("moses-reorder", "moses-reorder", "moses", "lexical-reordering-score", "orientation line",
          f"Moses' lexical-reordering-score extract.o.sorted 0.5 ... --model \"wbe msd wbe-msd-bidirectional-fe\" on "
          f"the same orientation lines sorted as train-model.perl sorts them (LC_ALL=C sort, not counted), the whole "
          f"run counted: its table's gzip at the end included (it always compresses; ours writes plain here)"),
    Point("moses-score", "moses-score", "moses", "score+consolidate", "extract line",
          f"Moses' score (direct, and --Inverse) and consolidate on the same extract of {SCORE_SENTENCES} sentence "
          f"pairs, each whole run counted (lex loading included); the GNU sorts between them are not counted "
          f"(ours sorts inside its count)"),
]
BY_NAME = {p.name: p for p in POINTS}
GROUPS = sorted({p.group for p in POINTS})
ORACLE_GROUPS = {"lm-o5", "kenlm-o5", "kenlm-trie-o5", "decode", "moses2", "score", "tables", "moses-score",
                 "moses-reorder"}
#: our point -> the peer's point on the same input (the "ours / peer" columns of the tables); a peer's own partner is
#: the first point of ours that names it (:func:`pair_of`)
PAIRS: dict[str, str] = {
    **{f"hash-keys-{mib}mib-q{q}": f"kenlm-hash-{mib}mib-q{q}" for mib in KEYS_MIB for q in KEYS_QUEUES},
    "lm-o5-sequential": "kenlm-probing-o5",
    "lm-o5-automaton-q8": "kenlm-probing-o5",
    "btree-o5-k31": "kenlm-trie-o5",
    "cube-p400-s400": "moses2-cube-p400-s400",
    "normal-s100": "moses2-normal-s100",
    "score-t1": "moses-score",
    "reorder-t1": "moses-reorder",
}


def pair_of(name: str) -> str | None:
    """The comparable point of the other system: PAIRS for ours, the first point of ours naming it for a peer."""
    return PAIRS.get(name) or next((ours for ours, peer in PAIRS.items() if peer == name), None)


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

    rng = np.random.default_rng(20261128 + mib)
    t, cap = ProbingHashTable.for_bytes(mib << 20, 2 / 3, "pow2", "kv", huge=False)
    keys = np.unique(rng.integers(1, 2**63, size=cap, dtype=np.uint64))
    t.insert(keys, keys * np.uint64(3))
    q = np.concatenate([rng.choice(keys, size=HASH_LOOKUPS // 2),
                        rng.integers(2**63, 2**64 - 1, size=HASH_LOOKUPS - HASH_LOOKUPS // 2, dtype=np.uint64)])
    rng.shuffle(q)
    return _hash_lookups(t, _paged(q), f"hash-kv-{mib}mib", (0, 16),
                         lambda found, values: f"{int(found.sum())}:{int(np.bitwise_xor.reduce(values)):x}")


def _hash_lookups(t: Any, q: Any, name: str, queues: Iterable[int],
                  checksum: Callable[[Any, Any], str]) -> dict[str, Driven]:
    """The points ``name``-q<queue> of one table ``t``: sb_hash_find_batch over the paged queries ``q``, a checksum
    of (found, values) after the region."""
    import numpy as np

    from .native import as_ptr, check, lib

    values = _paged(np.zeros(len(q), dtype=np.uint64))
    found = _paged(np.zeros(len(q), dtype=np.uint8))
    kp, vp, fp = as_ptr("uint64_t *", q), as_ptr("uint64_t *", values), as_ptr("uint8_t *", found)
    find = lib.sb_hash_find_batch
    keep = (t, q, values, found)  # the closure holds the objects that own the memory

    def point(queue: int) -> Driven:
        def run() -> int:
            check(find(keep[0]._t, kp, len(q), queue, vp, fp), "hash find")
            return len(q)
        return run, lambda: checksum(found, values)

    return {f"{name}-q{qs}": point(qs) for qs in queues}


def _prepare_hash_keys(mib: int) -> dict[str, Driven]:
    """Our 'keys' layout on the input of KenLM's hash benchmark with SEED (:data:`KEYS_SEED`): the same keys inserted
    in the same order, the same queries (all misses)."""
    from .hash.table import ProbingHashTable

    buckets, entries = keys_plan(mib)
    stream = splitmix64(KEYS_SEED, HASH_LOOKUPS + entries)
    q = _paged(stream[:HASH_LOOKUPS])
    keys = stream[HASH_LOOKUPS:]
    t = ProbingHashTable(buckets, "pow2", "keys", huge=False)
    t.insert(keys, keys)
    if len(t) != entries:  # a repeated key (KenLM's table would hold it twice): another seed is needed
        raise CountError(f"hash-keys-{mib}mib: SplitMix64({KEYS_SEED}) repeats a key ({len(t)} of {entries} entries)")
    del stream, keys
    return _hash_lookups(t, q, f"hash-keys-{mib}mib", KEYS_QUEUES, lambda found, values: f"found {int(found.sum())}")


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
    from .decode.search import check_sentence, entries, workspace
    from .native import check, ffi, lib

    model = PhraseModel(oracle / "moses.ini")
    lines = read_lines(oracle / "dev.es")
    out, counters = ffi.new("sb_pb_result **"), ffi.new("sb_pb_counters *")

    def point(dec: Any, n: int) -> Driven:
        texts = [check_sentence(line, f"{oracle}/dev.es:{i + 1}") for i, line in enumerate(lines[:n])]
        words = sum(len(split_words(t)) for t in texts)
        results: list[Any] = []
        decode = dec.decode
        ws = workspace()  # one kept across the point's sentences, as each worker of threads.c keeps one

        def run() -> int:
            for t in texts:
                check(decode(t, out, counters, ffi.NULL, ws), "decoding")
                results.append(out[0])
            return words

        def checksum() -> str:
            best = [entries(ffi.gc(r, lib.sb_pb_result_free))[0].text for r in results]
            return hashlib.sha1("\n".join(best).encode()).hexdigest()[:16]
        return run, checksum

    return {"cube-p400-s400": point(CubeDecoder(model, pop_limit=400, stack_size=400), DECODE_SENTENCES["cube"]),
            "normal-s100": point(NormalDecoder(model, stack_size=100), DECODE_SENTENCES["normal"])}


SCORE_MEMORY = 64 << 20  # the scoring point's sort budget: its extract fits in one run


def _prepare_score(inputs: Path) -> dict[str, Driven]:
    """Our scoring point on the folder :func:`_score_inputs` made (the driver's ORACLE argument for this group):
    the scorer is created and the files opened before the region; inside it, both lex tables, the extract and
    finish (merges, scores, the table written to a part file in ``inputs``' temporary folder)."""
    import hashlib

    from .native import check, ffi, lib

    td = Path("score-parts")  # in the driver's working folder (the count's own temp folder): one fixed name
    td.mkdir()
    args = ffi.new("sb_pscore_args *")
    tdb = ffi.new("char[]", str(td).encode())
    args.threads, args.memory_bytes, args.tmpdir = 1, SCORE_MEMORY, tdb
    args.smoothing, args.counts_only, args.weighted = lib.SB_PSCORE_SMOOTH_NONE, 0, 0
    pp = ffi.new("sb_pscore **")
    check(lib.sb_pscore_create(args, pp), "sb_pscore_create")
    sc = pp[0]
    err, line = ffi.new("char[512]"), ffi.new("uint64_t *")
    prefix = ffi.new("char[]", str(td / "part").encode())
    fds = [os.open(inputs / name, os.O_RDONLY) for name in ("lex.f2e", "lex.e2f", "extract")]
    st = ffi.new("sb_pscore_stats *")

    def run() -> int:
        rcs = [lib.sb_pscore_load_lex(sc, lib.SB_PSCORE_LEX_F2E, fds[0], line, err, 512),
               lib.sb_pscore_load_lex(sc, lib.SB_PSCORE_LEX_E2F, fds[1], line, err, 512),
               lib.sb_pscore_load_extract(sc, fds[2], line, err, 512),
               lib.sb_pscore_finish(sc, prefix, err, 512)]
        for rc in rcs:  # (the message is formatted on failure only: this runs inside the counted region)
            if rc:
                check(rc, f"scoring {inputs} (line {line[0]}: {ffi.string(err).decode(errors='replace')})")
        lib.sb_pscore_get_stats(sc, st)
        return int(st.lines)

    def checksum() -> str:
        for fd in fds:
            os.close(fd)
        table = (td / "part.0").read_bytes()
        lib.sb_pscore_free(sc)
        shutil.rmtree(td, ignore_errors=True)
        return f"{int(st.out_lines)}:{hashlib.sha1(table).hexdigest()[:16]}"

    # the reordering point: the orientation lines of the same extraction, its table in a folder of its own
    rd = Path("reorder-parts")
    rd.mkdir()
    pr = ffi.new("sb_reorder **")
    check(lib.sb_reorder_create(pr), "sb_reorder_create")
    ro = pr[0]
    ofd = os.open(inputs / "extract.o", os.O_RDONLY)
    # the path's char[] is held beside the array that points at it (a cffi pointer array does not keep its items
    # alive): held by the array alone, it was freed when this function returned, and sb_reorder_write opened
    # whatever the freed memory then held (an intermittent "I/O error", or a table written somewhere else)
    rpath = ffi.new("char[]", str(rd / "reordering-table").encode())
    rpaths = (rpath, ffi.new("char *[]", [rpath]))
    rkind, rst = ffi.new("int *"), ffi.new("sb_reorder_stats *")

    def run_reorder() -> int:
        # (the messages are formatted on failure only: this runs inside the counted region)
        if rc := lib.sb_reorder_count(ro, ofd, line, rkind, err, 512):
            check(rc, f"reordering {inputs}/extract.o (line {line[0]}: {ffi.string(err).decode(errors='replace')})")
        if rc := lib.sb_reorder_write(ro, 0.5, rpaths[1], 1):
            check(rc, f"sb_reorder_write {Path.cwd() / rd / 'reordering-table'}", errno_reason=True)
        lib.sb_reorder_get_stats(ro, rst)
        return int(rst.lines)

    def checksum_reorder() -> str:
        os.close(ofd)
        table = (rd / "reordering-table").read_bytes()
        lib.sb_reorder_free(ro)
        shutil.rmtree(rd, ignore_errors=True)
        return f"{int(rst.pairs)}:{hashlib.sha1(table).hexdigest()[:16]}"

    return {"score-t1": (run, checksum), "reorder-t1": (run_reorder, checksum_reorder)}


def _prepare_tables(inputs: Path) -> dict[str, Driven]:
    """The one-process tables point (tm extract --phrase-table's C path, no extract file) on the scoring points'
    folder, in a driver of its own (group ``tables``: its preparation does not move the score group's heap): the
    corpus read and the scorer created before the region; inside it, the lexical counts' pass, the lex tables
    formatted and loaded, the pairs' pass into the scorer, finish."""
    import hashlib

    from .native import check, ffi, lib

    err, line, pp = ffi.new("char[512]"), ffi.new("uint64_t *"), ffi.new("sb_pscore **")
    corpus = [(inputs / n).read_bytes() for n in ("train.es", "train.en", "train.aligned.grow-diag-final-and")]
    xd = Path("tables-parts")
    xd.mkdir()
    xargs = ffi.new("sb_pscore_args *")
    xdb = ffi.new("char[]", str(xd).encode())
    xargs.threads, xargs.memory_bytes, xargs.tmpdir = 1, SCORE_MEMORY, xdb
    xargs.smoothing, xargs.counts_only, xargs.weighted = lib.SB_PSCORE_SMOOTH_NONE, 0, 0
    check(lib.sb_pscore_create(xargs, pp), "sb_pscore_create")
    xsc = pp[0]
    xprefix = ffi.new("char[]", str(xd / "part").encode())
    xs, maxw, xst = ffi.new("sb_extract_state *"), ffi.new("int *"), ffi.new("sb_pscore_stats *")
    lexfds = [os.open(xd / name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600) for name in ("lex.f2e", "lex.e2f")]

    def extract(flags: int) -> None:
        xs.pos[0] = xs.pos[1] = xs.pos[2] = 0
        xs.next = 0
        if rc := lib.sb_extract_block(xs, corpus[0], len(corpus[0]), corpus[1], len(corpus[1]), corpus[2],
                                      len(corpus[2]), 7, flags):
            check(rc, f"extracting {inputs}")
        if xs.stop >= 0:  # (not in these inputs: the C path takes every sentence of them)
            raise CountError(f"{inputs}: sentence {xs.stop + 1} needs the extractor's reference path")

    def run_tables() -> int:
        extract(4 | 8)  # the lexical counts only
        for which, fd in ((lib.SB_PSCORE_LEX_F2E, lexfds[0]), (lib.SB_PSCORE_LEX_E2F, lexfds[1])):
            xs.len[0] = 0
            if rc := lib.sb_extract_lex_format(xs, 0 if which == lib.SB_PSCORE_LEX_F2E else 1):
                check(rc, "formatting the lex tables")
            os.write(fd, ffi.buffer(xs.data[0], xs.len[0]))
            os.lseek(fd, 0, os.SEEK_SET)
            if rc := lib.sb_pscore_load_lex(xsc, which, fd, line, err, 512):
                check(rc, f"loading the lex tables (line {line[0]}: {ffi.string(err).decode(errors='replace')})")
        if rc := lib.sb_pscore_begin_pairs(xsc, maxw):
            check(rc, "sb_pscore_begin_pairs")
        xs.score, xs.score_t = xsc, 0
        extract(16)  # each phrase pair into the scorer
        if rc := lib.sb_pscore_finish(xsc, xprefix, err, 512):
            check(rc, f"scoring ({ffi.string(err).decode(errors='replace')})")
        lib.sb_pscore_get_stats(xsc, xst)
        return int(xs.pairs)

    def checksum_tables() -> str:
        for fd in lexfds:
            os.close(fd)
        table = (xd / "part.0").read_bytes()
        lib.sb_extract_free(xs)
        lib.sb_pscore_free(xsc)
        shutil.rmtree(xd, ignore_errors=True)
        return f"{int(xst.out_lines)}:{hashlib.sha1(table).hexdigest()[:16]}"

    return {"tables-t1": (run_tables, checksum_tables)}


def drive(group: str, out: str, oracle: Path) -> int:
    """Under valgrind: prepare the group's points uninstrumented, then count each inside its own region."""
    import gc

    _load_extension()
    import numpy as np

    from .native import as_ptr, buildinfo, ffi, lib

    if "-march=native" in buildinfo()["cflags_compiled"]:  # the loaded extension's own flags (SMTBENCH_COUNT_EXT's)
        raise CountError("counts need the portable build (SMTBENCH_NATIVE=0): valgrind 3.19 stops on AVX-512")
    if not lib.sb_cg_available():
        raise CountError("this build of the extension has no callgrind client requests (valgrind/callgrind.h "
                         "was absent when it was compiled): install valgrind and rebuild")
    if group.startswith("hash-keys-"):
        points = _prepare_hash_keys(int(group.removeprefix("hash-keys-").removesuffix("mib")))
    elif group.startswith("hash-"):
        points = _prepare_hash(int(group.removeprefix("hash-").removesuffix("mib")))
    elif group == "lm-o5":
        points = _prepare_lm(oracle)
    elif group == "decode":
        points = _prepare_decode(oracle)
    elif group == "score":
        points = _prepare_score(oracle)
    elif group == "tables":
        points = _prepare_tables(oracle)
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


def _driver_env(argv: list[str], base: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's environment: Python's hash seed fixed, glibc's mmap threshold fixed (no dynamic threshold: every
    allocation of 64 KiB or more, the kernels' own included, is page-aligned), and the strings at the top of the
    stack padded to one length (SMTBENCH_COUNT_PAD), so that the stack's offset in its page does not follow the
    length of the checkout's paths."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k != "SMTBENCH_COUNT_PAD"}
    env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MALLOC_MMAP_THRESHOLD_="65536")
    used = sum(len(a.encode()) + 1 for a in argv) + len(os.fsencode(argv[0])) + 1
    used += sum(len(k.encode()) + len(v.encode()) + 2 for k, v in env.items()) + len("SMTBENCH_COUNT_PAD=") + 1
    used += 8 * (len(env) + 1 + len(argv) + 2)  # envp, argv and argc below the strings (the pad included)
    env["SMTBENCH_COUNT_PAD"] = "x" * ((-used) % 4096)
    return env


def _canonical_driver(tmp: Path, oracle: Path, argv_tail: list[str]) -> tuple[list[str], dict[str, str], Path]:
    """The driver's command, environment and working folder, the same strings on every checkout: Python's heap
    holds the paths it was given (sys.path, modules' file names, os.environ), and their lengths move where the
    kernels' small allocations land, so a simulated-cache count (D1 sets are address bits 6-11) moved by up to
    1.2% between two checkouts of one commit. So the driver runs the base interpreter (``-S``: no site, no
    .pth files) from a link farm of fixed-length names in the count's temp folder (``f/p`` -> the package's
    folder, ``f/s<i>`` -> the site folders of numpy and cffi, ``f/o`` -> the oracle), in that folder, with a
    minimal environment (no inherited variables but ``SMTBENCH_COUNT_EXT``, linked as ``f/_native.so``), the
    bytecode of the package and of numpy compiled beforehand into the farm's cache. Returns (argv after
    valgrind's options, env, cwd); ``argv_tail`` follows ``-m smtbench.counts drive`` with ``{o}`` standing for
    the oracle and ``{f}`` for the farm."""
    import cffi
    import numpy

    import compileall

    farm = tmp / "f"
    farm.mkdir(exist_ok=True)
    links = {"p": Path(__file__).resolve().parents[1], "o": Path(oracle).resolve()}
    for i, d in enumerate(sorted({Path(numpy.__file__).resolve().parents[1],
                                   Path(cffi.__file__).resolve().parents[1]})):
        links[f"s{i}"] = d
    for name, target in links.items():  # made again for each group: f/o is the oracle or a group's own inputs
        link = farm / name
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target)
    # bytecode compiled beforehand, for the paths the driver sees, into the farm's own cache (f/c): a pyc holds
    # its source's path (unmarshalled, then replaced), and a first run that compiles allocates more
    saved = sys.pycache_prefix
    sys.pycache_prefix = str(farm / "c")
    try:
        compileall.compile_dir(str(farm / "p" / "smtbench"), quiet=2)
        for site in (n for n in links if n.startswith("s")):
            for pkg in ("numpy", "cffi"):
                if (farm / site / pkg).is_dir():
                    compileall.compile_dir(str(farm / site / pkg), quiet=2, rx=re.compile(r"/tests?/"))
        # and the standard library's, once a count: with PYTHONPYCACHEPREFIX the driver looks for every module's
        # bytecode there, so without it the first group's driver compiled the modules it imported and the later
        # ones loaded them: another heap, whichever group came first (reorder-t1's calloc took fresh zero pages in
        # one and freed heap in the other: dw 127.1 vs 120.9 a line)
        if not (farm / "c" / ".stdlib").exists():
            import sysconfig
            compileall.compile_dir(sysconfig.get_paths()["stdlib"], quiet=2, workers=os.cpu_count() or 1,
                                   rx=re.compile(r"/(tests?|idlelib|tkinter|turtledemo|lib2to3|ensurepip|"
                                                 r"site-packages|dist-packages)/"))
            (farm / "c" / ".stdlib").touch()
    finally:
        sys.pycache_prefix = saved
    py = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    argv = [py, "-S", "-m", "smtbench.counts", "drive",
            *(a.replace("{o}", "f/o").replace("{f}", "f") for a in argv_tail)]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPYCACHEPREFIX": "f/c",
           "PYTHONPATH": ":".join(f"f/{n}" for n in links if n != "o")}
    if os.environ.get("SMTBENCH_COUNT_EXT"):  # another build of the extension, linked in as f/_native.so
        ext = Path(os.environ["SMTBENCH_COUNT_EXT"]).resolve()
        if not ext.is_file():
            raise CountError(f"SMTBENCH_COUNT_EXT={os.environ['SMTBENCH_COUNT_EXT']}: no such file")
        if (farm / "_native.so").is_symlink():
            (farm / "_native.so").unlink()
        (farm / "_native.so").symlink_to(ext)
        env["SMTBENCH_COUNT_EXT"] = "f/_native.so"
    return argv, _driver_env(argv, env), tmp


def _run_ours(group: str, points: list[Point], tmp: Path, oracle: Path, keep: Path | None) -> dict[str, dict]:
    out_json, cg = tmp / f"{group}.json", tmp / f"{group}.callgrind"
    argv, env, cwd = _canonical_driver(tmp, oracle, [group, f"{group}.json", "{o}"])
    cmd = [_valgrind(), *VALGRIND_ARGS, "--instr-atstart=no", f"--callgrind-out-file={cg}", *argv]
    r = procs.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
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


def _run_kenlm(oracle: Path, workdir: Path, tmp: Path, keep: Path | None,
               kind: str = "probing") -> dict[str, dict] | None:
    """Point ``kenlm-<kind>-o5``: kenlm_benchmark -q -t 1 on KenLM's ``kind`` binary of the oracle's ARPA and dev.en's
    ids in that binary's vocabulary (probing and trie number words differently)."""
    from .lm import kenlm_peer

    try:
        prog = kenlm_peer.program("kenlm_benchmark")
    except FileNotFoundError:
        return None
    workdir.mkdir(parents=True, exist_ok=True)
    name = f"kenlm-{kind}-o5"
    binary = workdir / f"lm-en5.{kind}"
    ids = workdir / ("dev.en.kenlm-ids" if kind == "probing" else f"dev.en.kenlm-{kind}-ids")
    arpa = oracle / "lm-en5.arpa.xz"
    if not binary.exists() or binary.stat().st_mtime < arpa.stat().st_mtime:
        kenlm_peer.build_binary(arpa, kind, binary)
    if not ids.exists() or ids.stat().st_mtime < binary.stat().st_mtime:
        with open(oracle / "dev.en", "rb") as src, open(ids, "wb") as dst:
            procs.run([str(prog), "-v", "-m", str(binary)], stdin=src, stdout=dst, check=True,
                           stderr=subprocess.DEVNULL)
    cg = tmp / f"{name}.callgrind"
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
        shutil.copyfile(cg, keep / f"{name}.callgrind")
    return {name: {"units": run.queries, "checksum": repr(run.log10_sum), "events": ev}}


_LOOKUP_FN = re.compile(r"LookupNs<util::\(anonymous namespace\)::(?:Immediate<|PrefetchQueue<.*, (\d+)u> >\()")


def _run_kenlm_hash(mib: int, tmp: Path, keep: Path | None) -> dict[str, dict] | None:
    """Points ``kenlm-hash-<mib>mib-q<q>``: one run of KenLM's hash benchmark with SEED under valgrind, collecting
    inside its LookupNs<queue> only (--toggle-collect) and dumping before each queue's eviction read
    (--dump-before=*Evict*), so that each queue's lookups are one dump, known by the LookupNs in it."""
    import numpy as np

    from .lm import kenlm_peer

    try:
        kenlm_peer.program(kenlm_peer.HASH_BENCHMARK)
    except FileNotFoundError:
        return None
    try:
        prog = kenlm_peer.hash_program(seeded=True)
    except FileNotFoundError as exc:
        raise CountError(str(exc)) from None
    buckets, entries = keys_plan(mib)
    cg = tmp / f"kenlm-hash-{mib}mib.callgrind"
    argv = [str(prog), str(entries), str(HASH_LOOKUPS), str(KEYS_SEED)]
    r = procs.run([_valgrind(), *VALGRIND_ARGS, "--toggle-collect=*LookupNs<*", "--dump-before=*Evict*",
                   "--compress-strings=no", f"--callgrind-out-file={cg}", *argv],
                  capture_output=True, text=True, env=_driver_env(argv))
    if r.returncode != 0:
        tail = " | ".join([line for line in r.stderr.splitlines() if not line.startswith("==")][-5:])
        raise CountError(f"{prog.name} under valgrind failed (exit {r.returncode}): {tail}")
    head = re.search(r"^entries (\d+) bytes (\d+) ", r.stdout, re.M)
    drawn = re.search(r"^seed (\d+) drawn_xor ([0-9a-f]+)$", r.stdout, re.M)
    meaningless = re.search(r"^Meaningless (\d)", r.stderr, re.M)
    if not head or int(head.group(2)) != buckets * 8 or not drawn or not meaningless:
        raise CountError(f"{prog.name} {' '.join(argv[1:])}: not a table of {mib} MiB, or unexpected output: "
                         f"{r.stdout[:300]!r}")
    want = int(np.bitwise_xor.reduce(splitmix64(KEYS_SEED, HASH_LOOKUPS + entries)))
    if int(drawn.group(2), 16) != want:  # the keys of our hash-keys points are not the ones it drew
        raise CountError(f"{prog.name}: its SplitMix64({KEYS_SEED}) keys xor to {drawn.group(2)}, ours to {want:x}")
    found: dict[str, dict] = {}
    for f in sorted(tmp.glob(f"{cg.name}*")):
        _, ev, fns = read_callgrind(f)
        queues = {int(m.group(1) or 0) for fn in fns for m in [_LOOKUP_FN.search(fn)] if m and fns[fn]}
        if len(queues) > 1:
            raise CountError(f"{f.name}: lookups of queues {sorted(queues)} in one dump (want one per dump)")
        name = f"kenlm-hash-{mib}mib-q{queues.pop()}" if queues else ""
        if name in BY_NAME:
            found[name] = {"units": HASH_LOOKUPS, "checksum": f"bytes {head.group(2)} drawn_xor {drawn.group(2)} "
                                                             f"twiddle {meaningless.group(1)}",
                           "events": ev}
            if keep:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, keep / f"{name}.callgrind")
    missing = [f"kenlm-hash-{mib}mib-q{q}" for q in KEYS_QUEUES if f"kenlm-hash-{mib}mib-q{q}" not in found]
    if missing:
        raise CountError(f"{prog.name}: no callgrind dump for {', '.join(missing)}")
    return found


def _peer_cmd(argv: list[str], cg: Path, toggle: str | None = None) -> list[str]:
    """A peer program under callgrind (``toggle``: collect only inside that function, else the whole run)."""
    return [_valgrind(), *VALGRIND_ARGS, *([f"--toggle-collect={toggle}"] if toggle else []),
            f"--callgrind-out-file={cg}", *argv]


def _failed(what: str, rc: int, stderr: str) -> CountError:
    tail = " | ".join([line for line in stderr.splitlines() if not line.startswith("==")][-5:])
    return CountError(f"{what} under valgrind failed (exit {rc}): {tail[-400:]}")


def _peer_callgrind(argv: list[str], cg: Path, what: str, toggle: str | None = None, **kw: Any) -> str:
    """One peer program under callgrind (:func:`_peer_cmd`); its stdout. Its environment is the driver's (the
    stack's offset in its page fixed)."""
    r = procs.run(_peer_cmd(argv, cg, toggle), capture_output=True, text=True, env=_driver_env(argv), **kw)
    if r.returncode != 0:
        raise _failed(what, r.returncode, r.stderr)
    return r.stdout


def _kept(keep: Path | None, cg: Path, name: str) -> None:
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cg, keep / f"{name}.callgrind")


#: Moses2's search settings of each peer point: (search, stack, pop limit), as our paired point's decoder
MOSES2_SEARCH = {"moses2-cube-p400-s400": ("cube", 400, 400), "moses2-normal-s100": ("normal", 100, None)}


def _moses2_model(oracle: Path, workdir: Path) -> Path:
    """The model Moses2 loads under callgrind, made once in ``workdir``: the oracle's moses.ini with its phrase and
    reordering tables filtered to the decoded sentences (the first max(DECODE_SENTENCES) of dev.es: every line
    whose source phrase occurs in them, as Moses' filter-model-given-input.pl keeps them; tm.model.filter_table) and
    its LM as KenLM's probing binary of the same ARPA (the kenlm point's file). Loading the full text tables and the
    ARPA under callgrind's cache simulation takes minutes; these decode the same sentences to the same scores (the
    rows' identity fields check it against our decoder on the full model)."""
    from .lm import kenlm_peer
    from .tm.model import filter_table, input_phrases

    n = max(DECODE_SENTENCES.values())
    d = workdir / f"moses2-dev{n}"
    ini = d / "moses.ini"
    binary, arpa = workdir / "lm-en5.probing", oracle / "lm-en5.arpa.xz"
    workdir.mkdir(parents=True, exist_ok=True)
    if not binary.exists() or binary.stat().st_mtime < arpa.stat().st_mtime:
        kenlm_peer.build_binary(arpa, "probing", binary)
    stamp = f"{oracle.resolve()} {n} {binary.stat().st_mtime_ns}\n"
    if ini.exists() and (d / ".done").exists() and (d / ".done").read_text() == stamp:
        return ini
    d.mkdir(parents=True, exist_ok=True)
    src = d / "input"
    src.write_text("".join(line + "\n" for line in read_lines(oracle / "dev.es")[:n]), encoding="utf-8")
    phrases = input_phrases([str(src)])
    text = (oracle / "moses.ini").read_text(encoding="utf-8")
    for feature, name in (("PhraseDictionaryMemory", "phrase-table"), ("LexicalReordering", "reordering-table")):
        m = re.search(rf"^{feature} .*\bpath=(\S+)", text, re.M)
        if not m:
            raise CountError(f"{oracle}/moses.ini: no {feature} line with a path= (the Moses2 count points need one)")
        table = oracle / m.group(1)
        out = d / f"{name}{''.join(table.suffixes[-1:])}"
        filter_table(str(table), str(out), phrases)
        text = text.replace(m.group(0), m.group(0).replace(f"path={m.group(1)}", f"path={out.resolve()}"))
    m = re.search(r"^KENLM .*\bpath=(\S+)", text, re.M)
    if not m:
        raise CountError(f"{oracle}/moses.ini: no KENLM line with a path=")
    text = text.replace(m.group(0), m.group(0).replace(f"path={m.group(1)}", f"path={binary.resolve()}"))
    ini.write_text(text, encoding="utf-8")
    (d / ".done").write_text(stamp)
    return ini


def _run_moses2(points: list[Point], oracle: Path, workdir: Path, tmp: Path,
                keep: Path | None) -> dict[str, dict] | None:
    """Moses2 on :func:`_moses2_model` (config/peers.yaml's command: -threads 1, the search's flags), run from the
    ini's folder on the first sentences of dev.es, collecting only inside ``Moses2::TranslationTask::Run()`` (one
    call per sentence on the worker thread: decoding, the 1-best written to the output collector); the points'
    processes run side by side. Its 1-best lines are checked against our decoder's on the same sentences and the
    full model (decode.compare.peer_identity, counted, not fatal: the row says how many are identical, tie or
    differ). None where Moses2 (or KenLM's build_binary) is not built."""
    from . import moses_peer
    from .decode.compare import line_decimals, peer_identity, printed_digits
    from .decode.cube import CubeDecoder
    from .decode.model import PhraseModel
    from .decode.moses_run import moses_decoder
    from .decode.normal import NormalDecoder
    from .decode.search import check_sentence
    from .lm import kenlm_peer

    try:
        moses_peer.program("moses2")
        kenlm_peer.program("build_binary")
    except FileNotFoundError:
        return None
    ini = _moses2_model(oracle, workdir)
    lines = read_lines(oracle / "dev.es")
    out: dict[str, dict] = {}
    with contextlib.ExitStack() as stack:
        runs = []
        for p in points:  # every point's Moses2 at once (separate processes: the counts do not depend on it)
            search, size, pop = MOSES2_SEARCH[p.name]
            n = DECODE_SENTENCES[search]
            inp = tmp / f"{p.name}.in"
            inp.write_text("".join(line + "\n" for line in lines[:n]), encoding="utf-8")
            dec = moses_decoder("moses2", ini, search, size, pop, threads=1)
            cg = tmp / f"{p.name}.callgrind"
            io = [stack.enter_context(open(f, mode)) for f, mode in
                  ((inp, "rb"), (tmp / f"{p.name}.out", "w+"), (tmp / f"{p.name}.err", "w+"))]
            proc = stack.enter_context(procs.Popen(_peer_cmd(dec.argv, cg, "Moses2::TranslationTask::Run()"),
                                                   stdin=io[0], stdout=io[1], stderr=io[2], cwd=dec.cwd,
                                                   env=_driver_env(dec.argv)))
            runs.append((p, search, size, pop, n, dec, cg, io, proc))
        model = PhraseModel(oracle / "moses.ini")  # our 1-best of the same sentences on the full model, meanwhile
        for p, search, size, pop, n, dec, cg, io, proc in runs:
            ours = (CubeDecoder(model, pop_limit=pop, stack_size=size) if search == "cube"
                    else NormalDecoder(model, stack_size=size))
            best = [ours.translate(line).entries[0] for line in lines[:n]]
            rc = proc.wait()
            io[1].seek(0)
            io[2].seek(0)
            if rc != 0:
                raise _failed(f"moses2 ({p.name})", rc, io[2].read())
            printed, theirs, theirs_scores = [], [], []
            out_text = io[1].read()  # Moses2's 1-best lines end at "\n" (the line rule)
            for i, line in enumerate(out_text.removesuffix("\n").split("\n") if out_text else []):
                score, _, hyp = line.strip().partition(" ")
                try:
                    theirs_scores.append(float(score))
                except ValueError:
                    raise CountError(f"moses2 ({p.name}): output line {i + 1} is not 'SCORE HYP': "
                                     f"{line[:80]!r}") from None
                printed.append(score)
                theirs.append(hyp.strip())
            if len(theirs) != n:
                raise CountError(f"moses2 ({p.name}): {len(theirs)} output lines for {n} input lines")
            ident = peer_identity("moses2", [e.text for e in best], [e.total for e in best], theirs, theirs_scores,
                                  digits=printed_digits(printed) or 6, strict=False,
                                  line_digits=line_decimals(printed))
            _, ev = parse_callgrind(cg)
            _kept(keep, cg, p.name)
            texts = [check_sentence(line, f"{oracle}/dev.es:{i + 1}") for i, line in enumerate(lines[:n])]
            out[p.name] = {"units": sum(len(split_words(t)) for t in texts),
                           "checksum": hashlib.sha1("\n".join(theirs).encode()).hexdigest()[:16], "events": ev,
                           "fields": {"command": dec.describe(), "sentences": n,
                                      "allocator": moses_peer.allocator_of(moses_peer.program("moses2")),
                                      **{k: v for k, v in ident.as_dict("ours_vs").items()
                                         if not k.endswith("_list")}}}
    return out


def _score_inputs(oracle: Path, workdir: Path) -> Path:
    """The scoring points' input, made once in ``workdir`` (deterministic: the C extractor and LC_ALL=C sort): the
    oracle's first SCORE_SENTENCES aligned training sentence pairs, their lex tables and extract files (`tm
    extract --orientation`, max phrase length 7, plain), and the extract files sorted as Moses' score and
    lexical-reordering-score read them."""
    import lzma

    from .tm.extract import extract_files, lex_files

    d = workdir / f"score-{SCORE_SENTENCES}"
    stamp = f"{oracle.resolve()} {SCORE_SENTENCES} orientation\n"
    if (d / ".done").exists() and (d / ".done").read_text() == stamp:
        return d
    d.mkdir(parents=True, exist_ok=True)
    for name in ("train.es", "train.en", "train.aligned.grow-diag-final-and"):
        with lzma.open(oracle / f"{name}.xz", "rb") as src, open(d / name, "wb") as dst:
            for _, line in zip(range(SCORE_SENTENCES), src):
                dst.write(line)
    three = [str(d / n) for n in ("train.es", "train.en", "train.aligned.grow-diag-final-and")]
    lex_files(*three, str(d / "lex.f2e"), str(d / "lex.e2f"))
    extract_files(*three, str(d / "extract"), str(d / "extract.inv"), max_len=7, orientation_out=str(d / "extract.o"))
    for name in ("extract", "extract.inv", "extract.o"):
        with open(d / name, "rb") as src, open(d / f"{name}.sorted", "wb") as dst:
            procs.run(["sort", "-S", "64M", "-T", str(d)], stdin=src, stdout=dst, check=True,
                      env={**os.environ, "LC_ALL": "C"})
    (d / ".done").write_text(stamp)
    return d


def _run_moses_score(inputs: Path, tmp: Path, keep: Path | None) -> dict[str, dict] | None:
    """Moses' score (direct; --Inverse) and consolidate as train-model.perl runs them, on the sorted extract files of
    :func:`_score_inputs`, each whole run under callgrind, their events summed; the inverse half is sorted between
    (LC_ALL=C sort, not counted). The table is compared with ours (tm.model.compare_tables, printed precision)."""
    from . import moses_peer
    from .tm.model import compare_tables
    from .tm.score import score_native

    try:
        score, consolidate = (str(moses_peer.program(p)) for p in ("score", "consolidate"))
    except FileNotFoundError:
        return None
    t = tmp / "moses-score"
    t.mkdir()
    steps = [("direct", [score, str(inputs / "extract.sorted"), str(inputs / "lex.f2e"), str(t / "half.f2e")]),
             ("inverse", [score, str(inputs / "extract.inv.sorted"), str(inputs / "lex.e2f"), str(t / "half.e2f"),
                          "--Inverse"]),
             ("consolidate", [consolidate, str(t / "half.f2e"), str(t / "half.e2f.sorted"), str(t / "table")])]
    total: dict[str, int] = {}
    parts: dict[str, int] = {}
    for step, argv in steps:
        if step == "consolidate":
            with open(t / "half.e2f", "rb") as src, open(t / "half.e2f.sorted", "wb") as dst:
                procs.run(["sort", "-S", "64M", "-T", str(t)], stdin=src, stdout=dst, check=True,
                          env={**os.environ, "LC_ALL": "C"})
        cg = t / f"{step}.callgrind"
        _peer_callgrind(argv, cg, f"Moses' {Path(argv[0]).name} ({step})", cwd=str(t))
        _, ev = parse_callgrind(cg)
        for k, v in ev.items():
            total[k] = total.get(k, 0) + v
        parts[f"ir_{step}"] = ev.get("Ir", 0)
        _kept(keep, cg, f"moses-score-{step}")
    with open(inputs / "extract", "rb") as fh:
        units = sum(1 for line in fh if line.strip())
    ours = t / "ours.table"
    score_native(str(inputs / "extract"), str(inputs / "lex.f2e"), str(inputs / "lex.e2f"), str(ours), threads=1,
                 memory=SCORE_MEMORY)
    c = compare_tables(str(ours), str(t / "table"), columns=4, tmpdir=str(t))
    same = {f"vs_ours_{k}": c[k] for k in ("common", "only_ours", "only_theirs", "value_mismatches",
                                           "alignment_mismatches", "count_mismatches")}
    digest = hashlib.sha1((t / "table").read_bytes()).hexdigest()[:16]
    built = {f"{p}_allocator": moses_peer.allocator_of(moses_peer.program(p)) for p in ("score", "consolidate")}
    return {"moses-score": {"units": units, "checksum": digest, "events": total,
                            "fields": {**parts, **same, **built}}}


def _run_moses_reorder(inputs: Path, tmp: Path, keep: Path | None) -> dict[str, dict] | None:
    """Moses' lexical-reordering-score as train-model.perl runs it (smoothing 0.5, wbe-msd-bidirectional-fe) on the
    sorted extract.o of :func:`_score_inputs`, the whole run under callgrind (its gzip of the table included). Its
    table is compared with ours (the same pairs; values within its %f's printing)."""
    import gzip

    from . import moses_peer
    from .tm.reordering import score_reordering

    try:
        lrs = str(moses_peer.program("lexical-reordering-score"))
    except FileNotFoundError:
        return None
    t = tmp / "moses-reorder"
    t.mkdir()
    cg = t / "lexical-reordering-score.callgrind"
    _peer_callgrind([lrs, str(inputs / "extract.o.sorted"), "0.5", str(t / "rt."), "--model",
                     "wbe msd wbe-msd-bidirectional-fe"], cg, "Moses' lexical-reordering-score", cwd=str(t))
    _, ev = parse_callgrind(cg)
    _kept(keep, cg, "moses-reorder")
    table = t / "rt.wbe-msd-bidirectional-fe.gz"

    def values(lines) -> dict[str, list[float]]:
        out = {}
        for line in lines:
            f, e, v = line.rstrip("\n").split(" ||| ")
            out[f"{f} ||| {e}"] = [float(x) for x in split_words(v)]
        return out

    theirs = values(gzip.open(table, "rt", encoding="utf-8"))
    score_reordering([str(inputs / "extract.o")], str(t / "ours"))
    ours = values(read_lines(t / "ours"))
    common = ours.keys() & theirs.keys()
    bad = sum(1 for k in common if max(abs(a - b) for a, b in zip(ours[k], theirs[k])) > 1e-6)
    units = len(read_lines(inputs / "extract.o"))
    digest = hashlib.sha1(gzip.open(table).read()).hexdigest()[:16]
    return {"moses-reorder": {"units": units, "checksum": digest, "events": ev,
                              "fields": {"vs_ours_common": len(common), "vs_ours_only_ours": len(ours.keys() - common),
                                         "vs_ours_only_theirs": len(theirs.keys() - common),
                                         "vs_ours_value_mismatches": bad,
                                         "allocator": moses_peer.allocator_of(moses_peer.program(
                                             "lexical-reordering-score"))}}}


def count(points: list[Point], oracle: Path, workdir: Path, keep: Path | None = None,
          progress: bool = False) -> list[dict[str, Any]]:
    """Count every point (in group order); a peer that is not built gives a row with ``not_built``."""
    results: list[dict[str, Any]] = []
    workdir = Path(workdir).resolve()  # the driver and some peers run in the count's temp folder
    oracle = Path(oracle).resolve()
    groups = [g for g in GROUPS if any(p.group == g for p in points)]
    if any(g in ORACLE_GROUPS for g in groups) and not (oracle / "lm-en5.arpa.xz").exists():
        raise CountError(f"--oracle {oracle}: no lm-en5.arpa.xz there (the LM points count the Moses oracle's 5-gram; "
                         f"set --oracle or SMTBENCH_SHARED, or leave out {', '.join(sorted(ORACLE_GROUPS))})")
    with tempfile.TemporaryDirectory(prefix="smtbench-count-", dir="/tmp") as td:
        tmp = Path(td)
        final_keep, keep = keep, (tmp / "keep" if keep is not None else None)  # published once all are counted
        for g in groups:
            pts = [p for p in points if p.group == g]
            if progress:
                print(f"count: {g} ({', '.join(p.name for p in pts)})", file=sys.stderr, flush=True)
            if g == "kenlm-o5":
                got = _run_kenlm(oracle, workdir, tmp, keep)
            elif g == "kenlm-trie-o5":
                got = _run_kenlm(oracle, workdir, tmp, keep, kind="trie")
            elif g.startswith("kenlm-hash-"):
                got = _run_kenlm_hash(int(g.removeprefix("kenlm-hash-").removesuffix("mib")), tmp, keep)
            elif g == "moses2":
                got = _run_moses2(pts, oracle, workdir, tmp, keep)
            elif g == "moses-score":
                got = _run_moses_score(_score_inputs(oracle, workdir), tmp, keep)
            elif g == "moses-reorder":
                got = _run_moses_reorder(_score_inputs(oracle, workdir), tmp, keep)
            elif g in ("score", "tables"):
                got = _run_ours(g, pts, tmp, _score_inputs(oracle, workdir), keep)
            else:
                got = _run_ours(g, pts, tmp, oracle, keep)
            for p in pts:
                r = (got or {}).get(p.name)
                row: dict[str, Any] = {"point": p.name, "group": p.group, "system": p.system, "kernel": p.kernel,
                                       "unit": p.unit, "what": p.what, "pair": pair_of(p.name)}
                if r is None:
                    row["not_built"] = True
                else:
                    m = metrics_of(r["events"])
                    row.update(units=r["units"], checksum=r["checksum"], **r.get("fields", {}), **m,
                               **{f"{k}_per_unit": v / r["units"] for k, v in m.items()},
                               events=r["events"])
                results.append(row)
        if final_keep is not None and keep is not None:
            _publish_dir(keep, Path(final_keep))
    return results


def _publish_dir(stage: Path, dest: Path) -> None:
    """``dest`` becomes its old files (points not counted this time) plus ``stage``'s, in one rename: a failed count
    leaves the old folder as it was, never half of a new one."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    new = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    if dest.is_dir():
        for f in dest.iterdir():
            if f.is_file():
                shutil.copy2(f, new / f.name)
    if stage.is_dir():
        for f in stage.iterdir():
            shutil.copyfile(f, new / f.name)
    old = dest.parent / f".{dest.name}.old-{os.getpid()}"
    if dest.exists():
        dest.rename(old)
    new.rename(dest)
    shutil.rmtree(old, ignore_errors=True)


def environment() -> dict[str, str]:
    """What a count depends on beyond our code and the pinned caches: the C library (its string functions' and
    malloc's instruction counts follow its version and the buffers' alignment), the interpreter and numpy (their
    heap use moves where our small allocations land), the kernel and the CPU valgrind describes to the program.
    Two count runs compare exactly only under the same environment (CONTRIBUTING 'Counts')."""
    import platform

    import numpy

    deb = ""
    try:
        r = procs.run(["dpkg-query", "-W", "-f", "${Version}", "libc6"], capture_output=True, text=True, timeout=10)
        deb = r.stdout.strip() if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        pass
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace", newline="\n") as fh:
            info = dict(line.split(":", 1) for line in fh if ":" in line and line.split(":", 1)[0].strip()
                        in ("vendor_id", "cpu family", "model"))
        cpu = " ".join(f"{k.strip()}={v.strip()}" for k, v in sorted(info.items()))
    except OSError:
        pass
    return {"libc": " ".join(x for x in (os.confstr("CS_GNU_LIBC_VERSION") or "", deb) if x),
            "kernel": platform.release(), "python": platform.python_version(), "numpy": numpy.__version__,
            "cpu": cpu}


def write_outputs(results: list[dict[str, Any]], rows: str | None, table: str | None) -> None:
    from .benchutil import RowWriter
    from .ioutil import atomic_open

    if rows:
        with atomic_open(rows) as fh:
            w = RowWriter("counts", fh, fixed={"valgrind": valgrind_version(), "geometry": GEOMETRY,
                                                "environment": environment(),
                                                "instrumentation": "client requests around the C call "
                                                "(ours); --toggle-collect of the worker loop (kenlm_benchmark), "
                                                "of each queue's LookupNs (KenLM's hash benchmark) or of "
                                                "Moses2::TranslationTask::Run() (moses2); whole runs (Moses' score "
                                                "and consolidate)"})
            for r in results:
                w.emit(**r)
    if table:
        with atomic_open(table) as fh:
            out = csv.writer(fh, lineterminator="\n")
            out.writerow(TABLE_COLUMNS)
            for r in results:
                if r.get("not_built"):
                    continue
                for m in METRICS:
                    out.writerow([r["point"], r["system"], r["kernel"], r["unit"], m, f"{r[m + '_per_unit']:.6g}",
                                  pair_of(r["point"]) or ""])


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
