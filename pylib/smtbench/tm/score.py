"""Phrase scoring, three ways, all writing the same Moses phrase table
``F ||| E ||| p(f|e) lex(f|e) p(e|f) lex(e|f) ||| align ||| c(e) c(f) c(e,f)``:

* :func:`score_native` — Mediani et al. §3.1 in C (csrc/tm/phrase_*.c, see phrase_score.h): multithreaded load
  computing the lexical weights, external-memory sort of fixed-size integer-id records in runs bounded by ``memory``,
  multiway merges by target then by source. Also the partition step of the distributed form (§3.3):
  ``counts_only`` writes partial counts (``F ||| E ||| align ||| count``), and ``weighted`` inputs merge them.
* :func:`score_pandas` — the in-memory baseline and correctness oracle (pandas group-by).
* :func:`score_sortpipe` — the Moses-style pipeline: GNU ``sort`` of extract and extract.inv, a single-threaded
  streaming scorer per direction (C), ``sort`` of the inverse half, and a merge-join (consolidate, C).

Conventions shared by all three (so that they agree exactly): per pair, the most frequent alignment wins, ties
going to the greater alignment as Moses' ``score`` stores it (a vector over target words of the sets of source
positions linked to each, compared lexicographically: :func:`moses_align_key`); the direct run (target E) picks the
printed alignment and lex(e|f), the inverse run (target F) picks lex(f|e), so the two lexical weights may come
from different alignments of the same pair; the lexical weights are those of the winning alignments (Moses' definition: average over links, NULL for unaligned words; a word pair absent from the
lex table weighs LEX_MISSING = 1, as Moses' ``score`` does: ``LexicalTable::permissiveLookup`` in
phrase-extract/score.h); scores are printed with 6 significant digits (as Moses does).
"""
from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..ioutil import atomic_open, atomic_path, decompressed_fd, gzip_compressobj, open_text, remove_stale_runs
from ..ioutil import TABLE_GZ_LEVEL, removed_on_signal, run_interruptible
from ..ioutil import words as split_words, join_words
from .. import procs

LEX_MISSING = 1.0  # Moses' score: LexicalTable::permissiveLookup returns 1.0 for a pair not in the lex table
SEP = " ||| "


class PhraseFormatError(ValueError):
    """A malformed extract or lex line: ``path:lineno: what is wrong``."""


# ------------------------------------------------------------------ shared helpers
#: bytes of a part file deflated into one gzip member (write_parts): the members in memory stay a few of these
MEMBER_BYTES = 32 << 20


def _gzip_member(src: Path, offset: int, size: int, level: int) -> bytes:
    """Bytes [offset, offset + size) of file ``src`` deflated into one gzip member, in memory (the deflate backend
    lets go of the GIL)."""
    co = gzip_compressobj(level)
    out = []
    with open(src, "rb") as fi:
        fi.seek(offset)
        while size > 0:
            block = fi.read(min(1 << 20, size))
            if not block:
                break
            size -= len(block)
            out.append(co.compress(block))
    out.append(co.flush())
    return b"".join(out)


def write_parts(parts: Sequence[Path], out: str, threads: int = 1, level: int = 1, gz: bool | None = None,
                member_bytes: int | None = MEMBER_BYTES) -> None:
    """Concatenate part files in order into ``out`` atomically. A ``.gz`` target (or any with ``gz``) is written as
    gzip members of ``member_bytes`` of a part each (None: a part each, for a reader that wants few members),
    compressed in ``threads`` threads (the deflate backend, ioutil.GZIP_BACKEND, releases the GIL), which is valid
    gzip."""
    target = Path(out)
    if not (target.suffix == ".gz" if gz is None else gz):
        with atomic_open(target, "wb") as fo:
            for p in parts:
                with open(p, "rb") as fi:
                    shutil.copyfileobj(fi, fo, 1 << 20)
        return
    # one member a range of MEMBER_BYTES of a part (a member may end inside a line: gzip's members concatenate to
    # the same text), deflated in parallel and written in order under a temporary name as they come, no member file
    # between (atomic_open would compress again)
    step = member_bytes or max(1, max(p.stat().st_size for p in parts))
    ranges = [(p, a, min(step, n - a)) for p in parts for n in [p.stat().st_size]
              for a in range(0, n, step)] or [(parts[0], 0, 0)]  # (an empty table: one empty member)
    with atomic_path(target) as tmp, open(tmp, "wb") as fo, ThreadPoolExecutor(max(1, threads)) as ex:
        for member in ex.map(lambda r: _gzip_member(*r, level), ranges):
            fo.write(member)


# ------------------------------------------------------------------ native (Mediani §3.1)
@dataclass
class ScoreStats:
    lines: int
    runs1: int
    runs2: int
    run_bytes: int
    src_phrases: int
    tgt_phrases: int
    alignments: int
    pairs: int
    out_lines: int
    dict_bytes: int
    buffer_bytes: int
    s_load: float
    s_merge1: float
    s_merge2: float
    kn_d: tuple[float, float, float]


def score_native(extracts: str | Sequence[str], lex_f2e: str | bytes, lex_e2f: str | bytes, out: str, *,
                 threads: int = 1, memory: int = 256 << 20, smoothing: str = "none", counts_only: bool = False,
                 weighted: bool = False, tmpdir: str | None = None, gzip_level: int = TABLE_GZ_LEVEL,
                 feed: Callable[[Any, int], None] | None = None, gz: bool | None = None) -> ScoreStats:
    """Score one or more extract files (several = the merge step of the distributed form, with
    ``weighted=True`` for partial-count files). Returns the run's statistics. ``feed`` (with no extract file): the
    phrase pairs come from ``feed(scorer, max_words)``, called once the lex tables are in (the extractor's records,
    tm extract --phrase-table: no extract line between); a lex table given as ``bytes`` is its text (the same
    extractor's, not yet published); ``gz``: a gzip table or not, whatever ``out``'s name says (write_parts)."""
    if isinstance(extracts, (str, os.PathLike)):
        extracts = [str(extracts)]
    if smoothing not in ("none", "kn"):
        raise ValueError(f"unknown smoothing {smoothing!r} (none or kn)")
    if not 1 <= threads <= 256:
        raise ValueError(f"--threads {threads}: must be in 1..256")
    if memory < (1 << 20):
        raise ValueError(f"--memory {memory} bytes: the scorer needs at least 1M of sort buffers")
    for path in list(extracts) + [x for x in (lex_f2e, lex_e2f) if not isinstance(x, bytes)]:
        if os.path.isdir(path):
            raise PhraseFormatError(f"{path}: is a directory, expected a file")
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
    from ..resources import require_memory
    require_memory(memory, "the phrase scorer's sort buffers")
    base = Path(tmpdir) if tmpdir else Path(out).resolve().parent
    if base.exists() and not base.is_dir():
        raise PhraseFormatError(f"--tmpdir {tmpdir}: is not a directory" if tmpdir else f"{base}: is not a directory")
    base.mkdir(parents=True, exist_ok=True)
    remove_stale_runs(base, ".pscore.")
    with tempfile.TemporaryDirectory(prefix=f".pscore.{os.getpid()}.", dir=base) as td, removed_on_signal(td):
        return run_interruptible(_score_native_in, td, extracts, lex_f2e, lex_e2f, out, threads, memory, smoothing,
                                 counts_only, weighted, gzip_level, feed, gz)


def _score_native_in(td, extracts, lex_f2e, lex_e2f, out, threads, memory, smoothing, counts_only, weighted,
                     gzip_level, feed=None, gz=None) -> ScoreStats:
    from ..native import check, ffi, lib
    args = ffi.new("sb_pscore_args *")
    tdb = ffi.new("char[]", td.encode())
    args.threads = threads
    args.memory_bytes = memory
    args.tmpdir = tdb
    args.smoothing = lib.SB_PSCORE_SMOOTH_KN if smoothing == "kn" else lib.SB_PSCORE_SMOOTH_NONE
    args.counts_only = int(counts_only)
    args.weighted = int(weighted)
    pp = ffi.new("sb_pscore **")
    check(lib.sb_pscore_create(args, pp), "sb_pscore_create")
    s = ffi.gc(pp[0], lib.sb_pscore_free)
    err = ffi.new("char[512]")
    line = ffi.new("uint64_t *")

    def fail(rc: int, path: str, what: str) -> None:
        if rc == lib.SB_EFORMAT:
            where = f"{path}:{line[0]}" if line[0] else path
            raise PhraseFormatError(f"{where}: {ffi.string(err).decode(errors='replace')}")
        check(rc, f"{what} {path}")

    for which, path in ((lib.SB_PSCORE_LEX_F2E, lex_f2e), (lib.SB_PSCORE_LEX_E2F, lex_e2f)):
        if isinstance(path, bytes):  # the extractor's text, read from a file of the run's own
            name = Path(td) / ("lex.f2e" if which == lib.SB_PSCORE_LEX_F2E else "lex.e2f")
            name.write_bytes(path)
            path = str(name)
        with decompressed_fd(path) as fd:
            rc = lib.sb_pscore_load_lex(s, which, fd, line, err, 512)
        fail(rc, path, "loading lex table")
    for path in extracts:
        with decompressed_fd(path) as fd:
            rc = lib.sb_pscore_load_extract(s, fd, line, err, 512)
        fail(rc, path, "loading")
    if feed is not None:
        maxw = ffi.new("int *")
        check(lib.sb_pscore_begin_pairs(s, maxw), "the scorer's vocabulary")
        feed(s, int(maxw[0]))
    prefix = Path(td) / "part"
    rc = lib.sb_pscore_finish(s, str(prefix).encode(), err, 512)
    if rc:
        check(rc, f"scoring ({ffi.string(err).decode(errors='replace')})")
    st = ffi.new("sb_pscore_stats *")
    lib.sb_pscore_get_stats(s, st)
    stats = ScoreStats(st.lines, st.runs1, st.runs2, st.run_bytes, st.src_phrases, st.tgt_phrases,
                       st.alignments, st.pairs, st.out_lines, st.dict_bytes, st.buffer_bytes,
                       st.ns_load / 1e9, st.ns_merge1 / 1e9, st.ns_merge2 / 1e9,
                       (st.kn_d1, st.kn_d2, st.kn_d3))
    ffi.release(s) if hasattr(ffi, "release") else None
    del s
    parts = [Path(f"{prefix}.{t}") for t in range(threads)]
    write_parts(parts, out, threads=threads, level=gzip_level, gz=gz)
    return stats


# ------------------------------------------------------------------ lex tables (Python side)
def read_lex(path: str, which: str) -> dict[tuple[str, str], float]:
    """{(f, e): w}: lex.f2e lines are ``e f w(e|f)``, lex.e2f lines ``f e w(f|e)``."""
    table: dict[tuple[str, str], float] = {}
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if "\x00" in line:
                raise PhraseFormatError(f"{path}:{lineno}: a NUL byte inside the line")
            parts = split_words(line)
            if not parts:
                continue
            if len(parts) != 3:
                raise PhraseFormatError(f"{path}:{lineno}: expected three fields `word word probability`")
            try:
                w = float(parts[2])
            except ValueError:
                raise PhraseFormatError(f"{path}:{lineno}: the probability is not a number in [0, 1]") from None
            if not (0.0 <= w <= 1.0 + 1e-6):
                raise PhraseFormatError(f"{path}:{lineno}: the probability is not a number in [0, 1]")
            if which == "f2e":
                table[parts[1], parts[0]] = w
            else:
                table[parts[0], parts[1]] = w
    if not table:
        raise PhraseFormatError(f"{path}: empty lex file (no `word word probability` line)")
    return table


def lex_weights(fw: Sequence[str], ew: Sequence[str], points: Sequence[tuple[int, int]],
                w_ef: dict, w_fe: dict) -> tuple[float, float]:
    """(lex(e|f), lex(f|e)) of a phrase pair under one alignment (Moses' definition)."""
    lef = 1.0
    for j, e in enumerate(ew):
        fs = [fw[i] for i, jj in points if jj == j]
        lef *= sum(w_ef.get((f, e), LEX_MISSING) for f in fs) / len(fs) if fs else w_ef.get(("NULL", e), LEX_MISSING)
    lfe = 1.0
    for i, f in enumerate(fw):
        es = [ew[j] for ii, j in points if ii == i]
        lfe *= sum(w_fe.get((f, e), LEX_MISSING) for e in es) / len(es) if es else w_fe.get((f, "NULL"), LEX_MISSING)
    return lef, lfe


def canonical_alignment(align: str) -> str:
    """Points as a set, listed in E order then F order (how Moses' extract writes them; the C scorer's form)."""
    pts = sorted({(int(a), int(b)) for a, b in (t.split("-") for t in split_words(align))}, key=lambda p: (p[1], p[0]))
    return " ".join(f"{f}-{e}" for f, e in pts)


def _points(align: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in (t.split("-") for t in split_words(align))]


def kn_discounts(counts) -> tuple[float, float, float]:
    """Moses consolidate's D1..D3 from count-of-counts n1..n4 of pair counts."""
    import numpy as np
    c = np.asarray(counts, dtype=float)
    n = [0.0] + [float(np.sum(np.abs(c - k) < 1e-9)) for k in (1, 2, 3, 4)]
    y = n[1] / (n[1] + 2 * n[2]) if n[1] + 2 * n[2] > 0 else 0.0
    d1 = 1 - 2 * y * n[2] / n[1] if n[1] > 0 else 0.0
    d2 = 2 - 3 * y * n[3] / n[2] if n[2] > 0 else 0.0
    d3 = 3 - 4 * y * n[4] / n[3] if n[3] > 0 else 0.0
    return tuple(max(0.0, min(d, cap)) for d, cap in ((d1, 0.9), (d2, 1.9), (d3, 2.9)))  # type: ignore[return-value]


def moses_align_key(align: str, by_f: bool) -> str:
    """A string that sorts as Moses' ``score`` compares alignments of one pair: a vector over target positions
    (E for the direct run, F for the inverse run, ``by_f``) of the set of source positions linked to each,
    compared lexicographically (a set is a run of element characters closed by a terminator that sorts below
    them, so a shorter set that is a prefix of another is less, and an empty set is less than any other)."""
    sets: list[list[int]] = [[] for _ in range(8)]
    for p in split_words(align):
        f, e = p.split("-")
        t, x = (int(f), int(e)) if by_f else (int(e), int(f))
        if t >= len(sets):
            sets.extend([] for _ in range(t + 1 - len(sets)))
        sets[t].append(x)
    return "".join("".join(chr(98 + x) for x in sorted(s)) + "a" for s in sets)


# ------------------------------------------------------------------ in-memory baseline / oracle
def read_extract_frame(paths: str | Sequence[str], weighted: bool = False, fvocab: set[str] | None = None,
                       evocab: set[str] | None = None):
    import pandas as pd
    if isinstance(paths, (str, os.PathLike)):
        paths = [str(paths)]
    frames = []
    for path in paths:
        with open_text(path) as fh:
            lines = [line.rstrip("\n") for line in fh]
        rows = []
        want = 4 if weighted else 3
        for lineno, line in enumerate(lines, 1):
            if "\x00" in line:
                raise PhraseFormatError(f"{path}:{lineno}: a NUL byte inside the line")
            if not line.strip():
                continue
            f = [x.strip() for x in line.split("|||")]
            if len(f) != want or not f[0] or not f[1]:
                raise PhraseFormatError(f"{path}:{lineno}: expected {want} `|||`-separated fields")
            fws, ews = split_words(f[0]), split_words(f[1])
            nf, ne = len(fws), len(ews)
            missing = [w for w in fws if fvocab is not None and w not in fvocab]
            if missing:
                raise PhraseFormatError(f"{path}:{lineno}: the source word '{missing[0][:100]}' is not in the lex tables")
            missing = [w for w in ews if evocab is not None and w not in evocab]
            if missing:
                raise PhraseFormatError(f"{path}:{lineno}: the target word '{missing[0][:100]}' is not in the lex tables")
            for t in split_words(f[2]):
                a, dash, b = t.partition("-")
                if not (dash and a.isdigit() and b.isdigit()):
                    raise PhraseFormatError(f"{path}:{lineno}: bad alignment point {t!r} (expected i-j)")
                if int(a) >= nf or int(b) >= ne:
                    raise PhraseFormatError(f"{path}:{lineno}: alignment point {t} outside the phrase pair")
            rows.append(f)
        cols = ["src", "tgt", "align"] + (["count"] if weighted else [])
        df = pd.DataFrame(rows, columns=cols)
        df["src"] = df["src"].map(join_words)
        df["tgt"] = df["tgt"].map(join_words)
        df["align"] = df["align"].map(canonical_alignment)
        df["count"] = df["count"].astype(float) if weighted else 1.0
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def score_pandas(extracts: str | Sequence[str], lex_f2e: str, lex_e2f: str, *, smoothing: str = "none",
                 weighted: bool = False):
    """The in-memory scorer (pandas group-by): a DataFrame with columns src, tgt, p_fe, lex_fe, p_ef, lex_ef,
    align, c_e, c_f, c_ef, in the order of Moses' sorted table (`LC_ALL=C sort` of its lines)."""
    import numpy as np
    w_ef = read_lex(lex_f2e, "f2e")
    w_fe = read_lex(lex_e2f, "e2f")
    # the C scorer keys phrases by the lex tables' words: a word outside them is refused there, and here
    fvocab = {f for f, _ in w_ef} | {f for f, _ in w_fe}
    evocab = {e for _, e in w_ef} | {e for _, e in w_fe}
    df = read_extract_frame(extracts, weighted, fvocab, evocab)
    trip = df.groupby(["src", "tgt", "align"], sort=False)["count"].sum().reset_index()
    # most frequent alignment, ties -> Moses' greater alignment, from the direct (E) and inverse (F) side
    trip["_kd"] = trip["align"].map(lambda a: moses_align_key(a, by_f=False))
    trip["_ki"] = trip["align"].map(lambda a: moses_align_key(a, by_f=True))
    best = (trip.sort_values(["src", "tgt", "count", "_kd"], ascending=[True, True, False, False], kind="stable")
            .drop_duplicates(["src", "tgt"], keep="first")[["src", "tgt", "align"]])
    best_inv = (trip.sort_values(["src", "tgt", "count", "_ki"], ascending=[True, True, False, False], kind="stable")
                .drop_duplicates(["src", "tgt"], keep="first")[["src", "tgt", "align"]]
                .rename(columns={"align": "align_inv"}))
    pairs = trip.groupby(["src", "tgt"], sort=False)["count"].sum().rename("c_ef").reset_index()
    pairs = pairs.merge(best, on=["src", "tgt"]).merge(best_inv, on=["src", "tgt"])
    pairs["c_e"] = pairs.groupby("tgt")["c_ef"].transform("sum")
    pairs["c_f"] = pairs.groupby("src")["c_ef"].transform("sum")
    lefs, lfes = [], []
    for s, t, a, ai in zip(pairs["src"], pairs["tgt"], pairs["align"], pairs["align_inv"]):
        lef, lfe = lex_weights(split_words(s), split_words(t), _points(a), w_ef, w_fe)
        if ai != a:
            lfe = lex_weights(split_words(s), split_words(t), _points(ai), w_ef, w_fe)[1]
        lefs.append(lef)
        lfes.append(lfe)
    pairs["lex_ef"] = lefs
    pairs["lex_fe"] = lfes
    c = pairs["c_ef"].to_numpy()
    if smoothing == "kn":
        d1, d2, d3 = kn_discounts(c)
        D = np.where(c < 2, d1, np.where(c < 3, d2, d3))
        D = np.where(D > c, c - 0.01, D)
        n1e = pairs.groupby("tgt")["src"].transform("size").to_numpy(float)
        n1f = pairs.groupby("src")["tgt"].transform("size").to_numpy(float)
        N = float(len(pairs))
        pairs["p_ef"] = (c - D + D * n1f * n1e / N) / pairs["c_f"].to_numpy()
        pairs["p_fe"] = (c - D + D * n1e * n1f / N) / pairs["c_e"].to_numpy()
    elif smoothing == "none":
        pairs["p_ef"] = c / pairs["c_f"].to_numpy()
        pairs["p_fe"] = c / pairs["c_e"].to_numpy()
    else:
        raise ValueError(f"unknown smoothing {smoothing!r}")
    # the order of `LC_ALL=C sort`ed lines `F ||| E ||| ...` (Moses'; the C scorer's keys): each side's bytes
    # followed by the ' ||| ' that ends it
    pairs["_ks"] = pairs["src"].map(lambda x: x.encode() + b" ||| ")
    pairs["_kt"] = pairs["tgt"].map(lambda x: x.encode() + b" ||| ")
    pairs = pairs.sort_values(["_ks", "_kt"]).drop(columns=["_ks", "_kt"]).reset_index(drop=True)
    return pairs[["src", "tgt", "p_fe", "lex_fe", "p_ef", "lex_ef", "align", "c_e", "c_f", "c_ef"]]


def write_table(df, out: str) -> None:
    with atomic_open(out) as fo:
        for r in df.itertuples(index=False):
            fo.write(f"{r.src} ||| {r.tgt} ||| {r.p_fe:.6g} {r.lex_fe:.6g} {r.p_ef:.6g} {r.lex_ef:.6g} ||| "
                     f"{r.align} ||| {r.c_e:.10g} {r.c_f:.10g} {r.c_ef:.10g}\n")


def read_table(path: str):
    """A Moses phrase table (ours) as a DataFrame with the oracle's columns."""
    import pandas as pd
    rows = []
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            f = [x.strip() for x in line.rstrip("\n").split("|||")]
            if len(f) != 5:
                raise PhraseFormatError(f"{path}:{lineno}: expected 5 `|||` fields in a phrase table line")
            sc = [float(x) for x in f[2].split()]
            cn = [float(x) for x in f[4].split()]
            rows.append((f[0], f[1], *sc, f[3], *cn))
    return pd.DataFrame(rows, columns=["src", "tgt", "p_fe", "lex_fe", "p_ef", "lex_ef", "align", "c_e", "c_f",
                                       "c_ef"])


def compare_tables(ours, oracle, tol: float = 1e-6) -> dict[str, float]:
    """Raise AssertionError unless both have the same pairs, alignments and counts and scores within tol
    (absolute, or relative for scores below 1). Returns the largest differences."""
    import numpy as np
    a = ours.sort_values(["src", "tgt"]).reset_index(drop=True)
    b = oracle.sort_values(["src", "tgt"]).reset_index(drop=True)
    if len(a) != len(b):
        raise AssertionError(f"{len(a)} pairs vs {len(b)} in the oracle")
    if not ((a["src"] == b["src"]).all() and (a["tgt"] == b["tgt"]).all()):
        bad = np.flatnonzero(~((a["src"] == b["src"]) & (a["tgt"] == b["tgt"])))[0]
        raise AssertionError(f"pair sets differ, first at {a.loc[bad, ['src', 'tgt']].tolist()} vs "
                             f"{b.loc[bad, ['src', 'tgt']].tolist()}")
    if not (a["align"] == b["align"]).all():
        bad = np.flatnonzero(a["align"] != b["align"])[0]
        raise AssertionError(f"alignment differs for {a.loc[bad, ['src', 'tgt', 'align']].tolist()} vs "
                             f"{b.loc[bad, 'align']}")
    out = {}
    for col in ("c_e", "c_f", "c_ef"):
        d = float(np.max(np.abs(a[col].to_numpy() - b[col].to_numpy()))) if len(a) else 0.0
        if d > 1e-6:
            raise AssertionError(f"{col} differs by {d}")
        out[col] = d
    for col in ("p_fe", "lex_fe", "p_ef", "lex_ef"):
        x, y = a[col].to_numpy(), b[col].to_numpy()
        d = np.abs(x - y)
        # 6 significant digits are printed: within 1e-6 absolute, or 1e-5 relative for tiny values
        ok = (d <= tol) | (d <= 1e-5 * np.abs(y))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise AssertionError(f"{col} differs for {a.loc[i, ['src', 'tgt']].tolist()}: {x[i]} vs {y[i]}")
        out[col] = float(d.max()) if len(d) else 0.0
    return out


# ------------------------------------------------------------------ Moses-style sort pipeline
def _sort_cmd(inp: str, memory: int, tmpdir: str, parallel: int) -> subprocess.Popen:
    """`gzip -dc inp | LC_ALL=C sort -S memory -T tmpdir --parallel=N` with its stdout a pipe."""
    env = dict(os.environ, LC_ALL="C")
    cat = procs.Popen(["gzip", "-dc", inp] if inp.endswith(".gz") else ["cat", inp], stdout=subprocess.PIPE)
    par = [f"--parallel={parallel}"] if parallel else []  # 0: GNU sort's default (all cores, up to 8), as Moses
    srt = procs.Popen(["sort", "-S", f"{max(1, memory >> 20)}M", "-T", tmpdir, *par],
                      stdin=cat.stdout, stdout=subprocess.PIPE, env=env)
    cat.stdout.close()
    srt._cat = cat  # type: ignore[attr-defined]
    return srt


def _finish(proc: subprocess.Popen, what: str, ok: bool = True) -> None:
    """Reap a sort pipeline; when the reader already failed (``ok`` false), the pipe it left broken is not an
    error of its own (the reader's error is the one to report)."""
    proc.stdout.close()
    if not ok:
        for p in (proc, proc._cat):  # type: ignore[attr-defined]
            with contextlib.suppress(OSError):
                p.kill()
            p.wait()
        return
    if proc.wait() or proc._cat.wait():  # type: ignore[attr-defined]
        raise RuntimeError(f"sorting {what} failed")


def score_sortpipe(extract: str, extract_inv: str, lex_f2e: str, lex_e2f: str, out: str, *,
                   memory: int = 256 << 20, tmpdir: str | None = None, sort_parallel: int = 0) -> None:
    """The Moses-style baseline: `sort` of extract | single-threaded scorer → half.f2e; `sort` of extract.inv |
    scorer → half.e2f; `sort` half.e2f; consolidate (join the halves). The scorers are C (phrase_baseline.c),
    single-threaded, streaming; GNU sort gets the same budget as ours and, as Moses runs it by default, no
    --parallel option (so it sorts with all cores, up to 8)."""
    from ..native import check, ffi, lib

    base = Path(tmpdir) if tmpdir else Path(out).resolve().parent
    if base.exists() and not base.is_dir():
        raise PhraseFormatError(f"--tmpdir {tmpdir}: is not a directory" if tmpdir else f"{base}: is not a directory")
    base.mkdir(parents=True, exist_ok=True)
    remove_stale_runs(base, ".sortpipe.")
    with tempfile.TemporaryDirectory(prefix=f".sortpipe.{os.getpid()}.", dir=base) as td, removed_on_signal(td):
        t = Path(td)
        args = ffi.new("sb_pscore_args *")
        tdb = ffi.new("char[]", td.encode())
        args.threads, args.memory_bytes, args.tmpdir = 1, 1 << 20, tdb
        pp = ffi.new("sb_pscore **")
        check(lib.sb_pscore_create(args, pp), "sb_pscore_create")
        s = ffi.gc(pp[0], lib.sb_pscore_free)
        err = ffi.new("char[512]")
        line = ffi.new("uint64_t *")
        for which, path in ((lib.SB_PSCORE_LEX_F2E, lex_f2e), (lib.SB_PSCORE_LEX_E2F, lex_e2f)):
            with decompressed_fd(path) as fd:
                rc = lib.sb_pscore_load_lex(s, which, fd, line, err, 512)
            if rc == lib.SB_EFORMAT:
                where = f"{path}:{line[0]}" if line[0] else path
                raise PhraseFormatError(f"{where}: {ffi.string(err).decode(errors='replace')}")
            check(rc, f"loading {path}")
        for inp, half, inverse in ((extract, t / "half.f2e", 0), (extract_inv, t / "half.e2f.unsorted", 1)):
            proc = _sort_cmd(inp, memory, td, sort_parallel)
            with open(half, "wb") as fo:
                rc = lib.sb_pscore_stream_half(s, proc.stdout.fileno(), fo.fileno(), inverse, line, err, 512)
            _finish(proc, inp, ok=rc == lib.SB_OK)
            if rc == lib.SB_EFORMAT:
                raise PhraseFormatError(f"{inp} (sorted):{line[0]}: {ffi.string(err).decode(errors='replace')}")
            check(rc, f"scoring {inp}")
        proc = _sort_cmd(str(t / "half.e2f.unsorted"), memory, td, sort_parallel)
        with open(t / "half.f2e", "rb") as fd_, open(t / "table", "wb") as fo:
            rc = lib.sb_pscore_consolidate(fd_.fileno(), proc.stdout.fileno(), fo.fileno(), line, err, 512)
        _finish(proc, "half.e2f", ok=rc == lib.SB_OK)
        if rc == lib.SB_EFORMAT:
            raise PhraseFormatError(f"{extract} / {extract_inv}: {ffi.string(err).decode(errors='replace')} at line {line[0]} of "
                                    "the sorted halves: the two extract files do not hold the same phrase pairs")
        check(rc, f"consolidate ({ffi.string(err).decode(errors='replace')}, line {line[0]})")
        write_parts([t / "table"], out, threads=1)


# ------------------------------------------------------------------ Moses' own programs (the live peer)
MOSES_SCORE_PROGRAMS = ("score", "consolidate")


def score_moses(extract: str, extract_inv: str, lex_f2e: str, lex_e2f: str, out: str, *, threads: int = 1,
                memory: int = 256 << 20, tmpdir: str | None = None) -> dict[str, float]:
    """Moses' phrase scoring as train-model.perl runs it (steps 5-6, extract-parallel.perl + score-parallel.perl):
    ``LC_ALL=C sort --parallel=N`` of extract and extract.inv; ``score extract.sorted lex.f2e half.f2e`` and
    ``score extract.inv.sorted lex.e2f half.e2f --Inverse``; ``sort`` of the inverse half; ``consolidate half.f2e
    half.e2f.sorted table``. With ``threads`` >= 2 the two sorts run side by side and so do the two directions (as
    train-model.perl forks them), GNU sort gets ``--parallel=threads``; with 1 every step runs alone
    (``--parallel=1``). Files stay uncompressed (the comparison is the scoring, not gzip; ``out`` ending in .gz is
    written by consolidate compressed). Returns the wall seconds of each stage (sort, score, consolidate)."""
    import time

    from .. import moses_peer
    progs = {p: str(moses_peer.program(p)) for p in MOSES_SCORE_PROGRAMS}
    for p in (extract, extract_inv, lex_f2e, lex_e2f):
        if not os.path.isfile(p):
            raise FileNotFoundError(f"{p}: no such file")
    if threads < 1:
        raise ValueError(f"threads {threads}: must be >= 1")
    base = Path(tmpdir) if tmpdir else Path(out).resolve().parent
    if base.exists() and not base.is_dir():
        raise PhraseFormatError(f"--tmpdir {tmpdir}: is not a directory" if tmpdir else f"{base}: is not a directory")
    base.mkdir(parents=True, exist_ok=True)
    remove_stale_runs(base, ".mosesscore.")
    env = dict(os.environ, LC_ALL="C")
    mem = f"{max(1, memory >> 20)}M"

    def sort(inp: str, dst: Path, td: str) -> list[str]:
        cat = f"gzip -dc {shlex.quote(inp)}" if inp.endswith(".gz") else f"cat {shlex.quote(inp)}"
        return ["bash", "-o", "pipefail", "-c",
                f"{cat} | sort -S {mem} -T {shlex.quote(td)} --parallel={threads} > {shlex.quote(str(dst))}"]

    def together(cmds: list[list[str]], what: str) -> None:
        """Run the steps side by side (threads >= 2) or one after another; any failure raises naming it. Each
        step's stderr goes to a file (a pipe left unread could fill and stall a step running beside another)."""
        errs = []
        logs = [tempfile.TemporaryFile() for _ in cmds]
        try:
            if threads >= 2:
                running = [procs.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=lg, group=True)
                           for c, lg in zip(cmds, logs)]
                codes = [p.wait() for p in running]
            else:
                codes = [procs.run(c, env=env, stdout=subprocess.DEVNULL, stderr=lg, group=True).returncode
                         for c, lg in zip(cmds, logs)]
            for c, code, lg in zip(cmds, codes, logs):
                if code:
                    lg.seek(0)
                    errs.append(f"{c[-1] if c[0] == 'bash' else ' '.join(c)}: exit {code}: "
                                f"{lg.read().decode(errors='replace').strip()[-400:]}")
        finally:
            for lg in logs:
                lg.close()
        if errs:
            raise RuntimeError(f"Moses' {what} failed: " + "; ".join(errs))

    with tempfile.TemporaryDirectory(prefix=f".mosesscore.{os.getpid()}.", dir=base) as td, removed_on_signal(td):
        t = Path(td)
        t0 = time.perf_counter()
        together([sort(extract, t / "extract.sorted", td), sort(extract_inv, t / "extract.inv.sorted", td)],
                 "sort of the extract files")
        t1 = time.perf_counter()
        direct = [progs["score"], str(t / "extract.sorted"), lex_f2e, str(t / "half.f2e")]
        inverse = ["bash", "-o", "pipefail", "-c",
                   " ".join(shlex.quote(x) for x in [progs["score"], str(t / "extract.inv.sorted"), lex_e2f,
                                                     str(t / "half.e2f"), "--Inverse"])
                   + " && " + sort(str(t / "half.e2f"), t / "half.e2f.sorted", td)[-1]]
        together([direct, inverse], "score")
        t2 = time.perf_counter()
        with atomic_path(out) as tmp_out:
            dst = str(tmp_out)
            if out.endswith(".gz") and not dst.endswith(".gz"):
                dst += ".gz"  # consolidate compresses by the name
            try:
                together([[progs["consolidate"], str(t / "half.f2e"), str(t / "half.e2f.sorted"), dst]],
                         "consolidate")
                if dst != str(tmp_out):
                    os.replace(dst, tmp_out)
            finally:
                if dst != str(tmp_out) and os.path.exists(dst):
                    os.unlink(dst)
        t3 = time.perf_counter()
    return {"s_sort": t1 - t0, "s_score": t2 - t1, "s_consolidate": t3 - t2}
