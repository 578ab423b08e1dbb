"""Lexicalized reordering tables as Moses' `lexical-reordering-score extract.o 0.5 ... --model "wbe msd
wbe-msd-bidirectional-fe"` writes them (see shared/notes/moses-training-formats.md):
``F ||| E ||| m_prev s_prev d_prev m_next s_next d_next`` with P(o) = (count(o) + s) / (total + 3 s), s = 0.5."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..ioutil import TABLE_GZ_LEVEL, atomic_open, open_text
from ..ioutil import words as split_words

_INDEX = {"mono": 0, "swap": 1, "other": 2}


class OrientationFormatError(ValueError):
    """A malformed orientation (extract.o) line; names file:line."""


def count_orientations(paths: Iterable[str], progress: bool = False) -> dict[tuple[str, str], list[int]]:
    from ..progress import bar
    counts: dict[tuple[str, str], list[int]] = {}
    for path in paths:
        with open_text(path) as fh, bar(f"reorder: count {path}", unit="line", on=progress) as pb:
            for lineno, line in enumerate(fh, 1):
                if not lineno & 0x3FFF:
                    pb.update(0x4000)
                parts = line.rstrip("\n").split(" ||| ")
                if len(parts) != 3:
                    raise OrientationFormatError(f"{path}:{lineno}: expected 'F ||| E ||| prev next'")
                o = split_words(parts[2])
                if len(o) != 2 or o[0] not in _INDEX or o[1] not in _INDEX:
                    raise OrientationFormatError(f"{path}:{lineno}: orientations must be two of mono/swap/other")
                c = counts.get((parts[0], parts[1]))
                if c is None:
                    c = counts[(parts[0], parts[1])] = [0] * 6
                c[_INDEX[o[0]]] += 1
                c[3 + _INDEX[o[1]]] += 1
    return counts


def pair_key(f: str, e: str) -> bytes:
    """The table's order: its lines' bytes (LC_ALL=C sort), as Moses' lexical-reordering-score writes it from its
    sorted extract.o - the bytes of "F ||| E ||| " (neither F nor E holds the separator, so these decide the order of
    two lines whatever follows; "F ||| E" alone would put "a ||| b" before "a ||| b c", which sort puts after)."""
    return f"{f} ||| {e} ||| ".encode("utf-8")


def write_reordering(counts: dict[tuple[str, str], list[int]], out: str, smoothing: float = 0.5) -> int:
    if not smoothing >= 0:
        raise ValueError(f"smoothing {smoothing}: must be >= 0")
    with atomic_open(out) as fh:
        for f, e in sorted(counts, key=lambda k: pair_key(*k)):
            c = counts[(f, e)]
            tp, tn = sum(c[:3]), sum(c[3:])
            vals = [(x + smoothing) / (tp + 3 * smoothing) for x in c[:3]] + \
                   [(x + smoothing) / (tn + 3 * smoothing) for x in c[3:]]
            fh.write(f"{f} ||| {e} ||| {' '.join(format(v, '.6g') for v in vals)}\n")
    return len(counts)


def score_reordering(orientation_files: Iterable[str], out: str, smoothing: float = 0.5,
                     progress: bool = False, plain: bool = False, threads: int = 1) -> int:
    """The table from the orientation files; returns its line count. The C kernel (csrc/tm/reorder.c) writes it;
    ``plain`` runs the pure-Python reference (:func:`count_orientations`, :func:`write_reordering`) instead, the same
    bytes (tests/test_tm_reordering.py). Standard input (``-``) is read by the reference."""
    files = [str(p) for p in orientation_files]
    if plain or "-" in files or str(out) == "-":
        return write_reordering(count_orientations(files, progress), out, smoothing)
    return score_reordering_native(files, out, smoothing, threads=threads).pairs


@dataclass
class ReorderStats:
    lines: int
    pairs: int
    arena_bytes: int
    table_bytes: int
    sort_bytes: int
    out_bytes: int
    s_count: float
    s_sort: float
    s_write: float
    streamed: bool = False   # every line came in the table's order (sorted input): no index, no sort


_FORMAT_LINES = 1 << 16   # table lines formatted at a time before deflating (~5 MB of text a thread)


class ReorderCounter:
    """The C scorer (csrc/tm/reorder.c): orientation lines counted from files (:meth:`count_file`) or from text
    blocks of whole lines (:meth:`count_text`: the extractor's own, no file between), then the table written
    (:meth:`write`). The long C calls let go of the GIL; callers run them through ioutil.run_interruptible."""

    def __init__(self) -> None:
        from ..native import check, ffi, lib
        pp = ffi.new("sb_reorder **")
        check(lib.sb_reorder_create(pp), "sb_reorder_create")
        self._r = ffi.gc(pp[0], lib.sb_reorder_free)
        self._err, self._line, self._kind = ffi.new("char[512]"), ffi.new("uint64_t *"), ffi.new("int *")
        self._text_line = ffi.new("uint64_t *", 1)

    def _check(self, rc: int, name: str) -> None:
        from ..ioutil import TextFormatError
        from ..native import check, ffi, lib
        if rc == lib.SB_EFORMAT:
            what = f"{name}:{self._line[0]}: {ffi.string(self._err).decode(errors='replace')}"
            raise TextFormatError(what) if self._kind[0] == lib.SB_REORDER_ERR_LINE else OrientationFormatError(what)
        check(rc, f"counting {name}")

    def count_file(self, path: str) -> None:
        from ..native import lib
        from ..ioutil import decompressed_fd
        with decompressed_fd(path) as fd:
            rc = lib.sb_reorder_count(self._r, fd, self._line, self._kind, self._err, 512)
        self._check(rc, path)

    def count_text(self, data: bytes, name: str) -> None:
        """Whole lines (the next block of the stream ``name``, whose line numbers the errors give)."""
        from ..native import lib
        self._check(lib.sb_reorder_count_text(self._r, data, len(data), self._text_line, self._line, self._kind,
                                              self._err, 512), name)

    def write(self, out: str, smoothing: float = 0.5, *, threads: int = 1, gzip_level: int = TABLE_GZ_LEVEL,
              gz: bool | None = None) -> ReorderStats:
        """The table into ``out``: a .gz one as ``threads`` parts formatted in memory and compressed in parallel, one
        gzip member each, no file between (``gzip_level``; the reference writes one member at level 6: other bytes,
        the same table), a plain one in place. ``gz``: compressed or not whatever the name says (a temporary name
        of a table published later under its own: tm.extract.extract_tables)."""
        import os

        from ..ioutil import atomic_path
        from ..native import check, ffi, lib
        if not smoothing >= 0:
            raise ValueError(f"smoothing {smoothing}: must be >= 0")
        if not 1 <= threads <= 256:
            raise ValueError(f"--threads {threads}: must be in 1..256")
        st = ffi.new("sb_reorder_stats *")

        def put(paths: list[str]) -> None:
            keep = [ffi.new("char[]", os.fsencode(p)) for p in paths]
            check(lib.sb_reorder_write(self._r, smoothing, ffi.new("char *[]", keep), len(paths)), f"writing {out}",
                  errno_reason=True)  # its parts are written one after another on this thread
            lib.sb_reorder_get_stats(self._r, st)

        if (str(out).endswith(".gz") if gz is None else gz):
            import time
            from concurrent.futures import ThreadPoolExecutor

            from ..ioutil import gzip_compressobj
            check(lib.sb_reorder_sort(self._r), f"sorting the table of {out}")
            t0 = time.perf_counter()
            lib.sb_reorder_get_stats(self._r, st)
            pairs = int(st.pairs)

            def member(part: int) -> tuple[bytes, int]:
                """Part ``part`` of ``threads`` (sb_reorder_write's parts) deflated into one gzip member, formatted in
                memory (C, no GIL) a bounded range of lines at a time; (the member, the bytes of its text)."""
                lo, hi = pairs * part // threads, pairs * (part + 1) // threads
                text, n = ffi.new("char **"), ffi.new("size_t *")
                co, out_parts, size = gzip_compressobj(gzip_level), [], 0
                for a in range(lo, hi, _FORMAT_LINES):
                    check(lib.sb_reorder_format(self._r, smoothing, a, min(hi, a + _FORMAT_LINES), text, n),
                          f"formatting {out}")
                    try:
                        out_parts.append(co.compress(ffi.buffer(text[0], n[0])))
                        size += n[0]
                    finally:
                        lib.sb_reorder_text_free(text[0])
                out_parts.append(co.flush())
                return b"".join(out_parts), size

            written = 0
            with atomic_path(out) as tmp, open(tmp, "wb") as fo, ThreadPoolExecutor(threads) as ex:
                for m, size in ex.map(member, range(threads)):
                    fo.write(m)
                    written += size
            lib.sb_reorder_get_stats(self._r, st)
            st.out_bytes = written
            st.ns_write = int((time.perf_counter() - t0) * 1e9)   # formatting and deflating, on `threads` threads
        else:  # written in place (no second copy of the table)
            with atomic_path(out) as tmp:
                put([tmp])
        return ReorderStats(st.lines, st.pairs, st.arena_bytes, st.table_bytes, st.sort_bytes, st.out_bytes,
                            st.ns_count / 1e9, st.ns_sort / 1e9, st.ns_write / 1e9, bool(st.streamed))


def score_reordering_native(orientation_files: Sequence[str], out: str, smoothing: float = 0.5, *,
                            threads: int = 1, gzip_level: int = TABLE_GZ_LEVEL) -> ReorderStats:
    """The C path of :func:`score_reordering`: each file counted by ``sb_reorder_count`` (a .gz/.xz one through
    ioutil.decompressed_fd, inflated by an in-process thread into a pipe, as the phrase scorer reads its extract),
    the table sorted and written by ``sb_reorder_write`` (:meth:`ReorderCounter.write`)."""
    import os

    from ..ioutil import run_interruptible
    if not smoothing >= 0:
        raise ValueError(f"smoothing {smoothing}: must be >= 0")
    if not 1 <= threads <= 256:
        raise ValueError(f"--threads {threads}: must be in 1..256")
    for path in orientation_files:
        if os.path.isdir(path):
            raise OrientationFormatError(f"{path}: is a directory, expected a file")
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")

    def run() -> ReorderStats:
        counter = ReorderCounter()
        for path in orientation_files:
            counter.count_file(path)
        return counter.write(out, smoothing, threads=threads, gzip_level=gzip_level)

    return run_interruptible(run)
