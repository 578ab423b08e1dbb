"""Moses phrase extraction (phrase-extract/extract-main.cpp semantics) and lexical translation tables
(scripts/training/LexicalTranslationModel.pm), see shared/notes/moses-training-formats.md.

F = source (es), E = target (en). Output lines:
  extract      ``F phrase ||| E phrase ||| fi-ei ...``   (points relative to the phrase, in E order)
  extract.inv  ``E phrase ||| F phrase ||| ei-fi ...``
  lex.f2e      ``e f w(e|f)``  with w(e|f) = c(f,e)/c(f)   (NULL may appear as f)
  lex.e2f      ``f e w(f|e)``  with w(f|e) = c(f,e)/c(e)   (NULL may appear as e)
"""
from __future__ import annotations

import collections
from collections import Counter
from typing import TYPE_CHECKING, Iterator, Sequence

from ..ioutil import atomic_open, atomic_path, open_text
from ..ioutil import words as split_words
from .align import AlignmentFormatError, parse_links

if TYPE_CHECKING:
    from .reordering import ReorderCounter

Phrase = tuple[int, int, int, int, list[tuple[int, int]]]  # sF, eF, sE, eE, relative (f, e) points


def extract_sentence(n_f: int, n_e: int, points: Sequence[tuple[int, int]], max_len: int = 7
                     ) -> Iterator[Phrase]:
    """Every phrase pair consistent with the alignment, Moses' algorithm: enumerate E spans of length
    ≤ max_len, take the F range they link to, reject if inconsistent or too long, then extend the F side
    over unaligned boundary words. Pairs without links are not emitted."""
    aligned_to_e: list[list[int]] = [[] for _ in range(n_e)]
    count_f = [0] * n_f
    for f, e in points:
        if not (0 <= f < n_f and 0 <= e < n_e):
            raise ValueError(f"alignment point {f}-{e} outside a {n_f}x{n_e} sentence pair")
        aligned_to_e[e].append(f)
        count_f[f] += 1
    for fs in aligned_to_e:
        fs.sort()
    for s_e in range(n_e):
        used = count_f[:]  # links of each F word not yet inside [s_e, e_e]
        min_f, max_f = n_f, -1
        for e_e in range(s_e, min(n_e, s_e + max_len)):
            for f in aligned_to_e[e_e]:
                used[f] -= 1
                if f < min_f:
                    min_f = f
                if f > max_f:
                    max_f = f
            if max_f < 0 or max_f - min_f >= max_len:
                continue
            if any(used[f] for f in range(min_f, max_f + 1)):
                continue
            s_f = min_f
            while s_f >= 0 and s_f > max_f - max_len and (s_f == min_f or count_f[s_f] == 0):
                e_f = max_f
                while e_f < n_f and e_f < s_f + max_len and (e_f == max_f or count_f[e_f] == 0):
                    rel = [(f - s_f, e - s_e) for e in range(s_e, e_e + 1) for f in aligned_to_e[e]]
                    yield s_f, e_f, s_e, e_e, rel
                    e_f += 1
                s_f -= 1


_ORIENT = ("mono", "swap", "other")


def _orientation(linked: set[tuple[int, int]], n_f: int, n_e: int, left: tuple[int, int],
                 right: tuple[int, int]) -> str:
    """Moses' word-based (wbe) msd orientation: mono if the `left` corner is linked and the `right` one is not,
    swap in the opposite case, else other. The virtual corners (-1,-1) and (|F|,|E|) count as linked."""
    def is_linked(f: int, e: int) -> bool:
        if (f, e) == (-1, -1) or (f, e) == (n_f, n_e):
            return True
        return (f, e) in linked
    a, b = is_linked(*left), is_linked(*right)
    return _ORIENT[0] if a and not b else _ORIENT[1] if b and not a else _ORIENT[2]


def orientations(n_f: int, n_e: int, linked: set[tuple[int, int]], s_f: int, e_f: int, s_e: int, e_e: int
                 ) -> tuple[str, str]:
    """(previous, next) orientation of a phrase pair, as `extract ... orientation --model wbe-msd` writes them."""
    prev = _orientation(linked, n_f, n_e, (s_f - 1, s_e - 1), (e_f + 1, s_e - 1))
    nxt = _orientation(linked, n_f, n_e, (e_f + 1, e_e + 1), (s_f - 1, e_e + 1))
    return prev, nxt


def parallel_lines(names: Sequence[str], handles: Sequence) -> Iterator[tuple[str, ...]]:
    """Lines of parallel files in step; files of different lengths are refused (naming each file and its line
    count) once the shortest ends, as tm align refuses them (outputs written through atomic_open are then
    discarded)."""
    import itertools
    end = object()
    n = 0
    for row in itertools.zip_longest(*handles, fillvalue=end):
        if any(x is end for x in row):
            counts = [n + (x is not end) + sum(1 for _ in h) for x, h in zip(row, handles)]
            raise AlignmentFormatError("files of different lengths: " + ", ".join(
                f"{name} has {c} lines" for name, c in zip(names, counts)))
        n += 1
        yield row


def _sentence_lines(ls: str, lt: str, la: str, align: str, lineno: int, max_len: int, inverse: bool,
                    orient: bool) -> tuple[list[str], list[str], list[str]]:
    """The reference path for one sentence pair: its extract, extract.inv and orientation lines."""
    fw, ew = split_words(ls), split_words(lt)
    pts = parse_links(la, align, lineno)
    linked = set(pts)
    buf, ibuf, obuf = [], [], []
    try:
        for s_f, e_f, s_e, e_e, rel in extract_sentence(len(fw), len(ew), pts, max_len):
            fp = " ".join(fw[s_f:e_f + 1])
            ep = " ".join(ew[s_e:e_e + 1])
            buf.append(f"{fp} ||| {ep} ||| {' '.join(f'{f}-{e}' for f, e in rel)}\n")
            if inverse:
                ibuf.append(f"{ep} ||| {fp} ||| {' '.join(f'{e}-{f}' for f, e in rel)}\n")
            if orient:
                prev, nxt = orientations(len(fw), len(ew), linked, s_f, e_f, s_e, e_e)
                obuf.append(f"{fp} ||| {ep} ||| {prev} {nxt}\n")
    except ValueError as exc:
        raise AlignmentFormatError(f"{align}:{lineno}: {exc}") from None
    return buf, ibuf, obuf


#: sentence pairs handed to the C extractor at a time
BLOCK = 1024
#: zlib's level for the extract files (.gz): files the next training step reads and nobody keeps, so the fastest
#: level (ISA-L's 1; the full corpus: 41.8 MB against 40.3 MB at level 6, 0.3-0.4 s less of a 2.4 s extraction)
EXTRACT_GZ_LEVEL = 1
#: bytes of orientation lines the reordering counter may lag behind the extraction in tm extract --phrase-table
#: (extract_tables): the counting takes about twice the extraction's time, so with a lag the extraction runs ahead
#: and the counting's tail overlaps the scorer's sort and merges instead of idling one core
COUNT_LAG = 192 << 20


def extract_files(src: str, tgt: str, align: str, extract_out: str, extract_inv_out: str | None,
                  max_len: int = 7, progress: bool = False, orientation_out: str | None = None,
                  plain: bool = False, reordering: ReorderCounter | None = None,
                  lex_out: tuple[str, str] | None = None) -> int:
    """Write Moses' extract and (unless ``extract_inv_out`` is None) extract.inv (gzip when the name ends in .gz),
    and with ``orientation_out`` the orientation file (`F ||| E ||| prev next`, wbe-msd). Returns the pair count.
    The C extractor (``csrc/tm/extract.c``) writes them; ``plain`` runs the pure-Python reference instead (the same
    bytes: ``tests/test_extract_c.py``). ``reordering`` (tm.reordering.ReorderCounter) is handed the orientation
    lines as they are made, whether or not ``orientation_out`` writes them: the reordering table without a text
    file between (its caller writes it). ``lex_out`` = (lex.f2e, lex.e2f): the lexical tables too, counted in the
    same pass by the C extractor (:func:`lex_files`' bytes; ``plain``: :func:`lexical_counts`, a pass of its own),
    published with the extract files once every input line has been read."""
    import contextlib

    from ..progress import bar
    n = 0
    with contextlib.ExitStack() as stack:
        pb = stack.enter_context(bar("extract", unit="pair", on=progress))
        fs, ft, fa = (stack.enter_context(open_text(p)) for p in (src, tgt, align))
        mode = "w" if plain else "wb"
        fo = stack.enter_context(atomic_open(extract_out, mode, gz_level=EXTRACT_GZ_LEVEL))
        fi = stack.enter_context(atomic_open(extract_inv_out, mode, gz_level=EXTRACT_GZ_LEVEL)) \
            if extract_inv_out else None
        fr = stack.enter_context(atomic_open(orientation_out, mode, gz_level=EXTRACT_GZ_LEVEL)) \
            if orientation_out else None
        lex = tuple(stack.enter_context(atomic_open(p, mode)) for p in lex_out) if lex_out else None
        rows = parallel_lines((src, tgt, align), (fs, ft, fa))
        if not plain:
            return _extract_native(rows, (src, tgt, align), (fo, fi, fr), max_len, pb, reordering, lex)
        for lineno, (ls, lt, la) in enumerate(rows, 1):
            pb.update()
            buf, ibuf, obuf = _sentence_lines(ls, lt, la, align, lineno, max_len, fi is not None,
                                              fr is not None or reordering is not None)
            fo.write("".join(buf))
            if fi is not None:
                fi.write("".join(ibuf))
            if fr is not None:
                fr.write("".join(obuf))
            if reordering is not None:
                reordering.count_text("".join(obuf).encode("utf-8"), ORIENTATION_LINES)
            n += len(buf)
        if lex is not None:  # a pass of its own, after the extraction's (whose errors come first, as in C)
            for out, text in zip(lex, _lex_text(*lexical_counts(src, tgt, align))):
                out.write(text)
    return n


def extract_tables(src: str, tgt: str, align: str, phrase_table: str, lex_out: tuple[str, str], *, max_len: int = 7,
                   threads: int = 1, memory: int = 256 << 20, smoothing: str = "none", tmpdir: str | None = None,
                   reordering: ReorderCounter | None = None, reordering_out: str | None = None,
                   reordering_smoothing: float = 0.5, orientation_out: str | None = None,
                   progress: bool = False):
    """The phrase table (``tm score``'s, the same bytes) and the lexical tables from the aligned corpus in one
    process, with no extract file between: a first pass counts the lexical tables (the scorer's vocabulary and
    weights) and, with ``reordering``, hands the orientation lines to the reordering counter (``reordering_out``
    written from it; its thread counts on through the second pass), a second extracts the phrase pairs straight
    into the scorer as records (``sb_extract_block`` flag 16: the words' codes looked up once a sentence, no line
    formatted or parsed). Every output is published together once all are made. Returns (pairs extracted,
    tm.score.ScoreStats)."""
    import concurrent.futures
    import contextlib
    import io

    from ..progress import bar
    from .score import score_native
    with contextlib.ExitStack() as stack:
        # every output under a temporary name, renamed together when the block ends
        pt = stack.enter_context(atomic_path(phrase_table))
        rt = stack.enter_context(atomic_path(reordering_out)) if reordering_out else None
        fr = stack.enter_context(atomic_open(orientation_out, "wb", gz_level=EXTRACT_GZ_LEVEL)) \
            if orientation_out else None
        lex = [stack.enter_context(atomic_open(p, "wb")) for p in lex_out]
        names = (src, tgt, align)
        texts: list[io.BytesIO] = [io.BytesIO(), io.BytesIO()]
        # the first pass: the lexical tables and the orientations (counted by a thread of their own, which may lag
        # COUNT_LAG behind and runs on through the second pass and the scorer's merges)
        counting: list = []
        with bar("lexical tables + orientations", unit="sentence", on=progress) as pb, \
                open_text(src) as fs, open_text(tgt) as ft, open_text(align) as fa:
            _extract_native(parallel_lines(names, (fs, ft, fa)), names, (None, None, fr), max_len, pb, reordering,
                            lex=texts, no_lines=True, count_lag=COUNT_LAG, deferred=counting)
        f2e, e2f = (t.getvalue() for t in texts)
        n = 0

        def feed(scorer, maxw: int) -> None:
            nonlocal n
            if max_len > maxw:
                raise ValueError(f"--max-length {max_len}: the scorer's keys hold at most {maxw} words a side "
                                 "with this vocabulary (write the extract file and run tm score, which refuses "
                                 "such phrases the same way, or extract shorter phrases)")
            with bar("phrase pairs into the scorer", unit="sentence", on=progress) as pb, \
                    open_text(src) as fs, open_text(tgt) as ft, open_text(align) as fa:
                n = _extract_native(parallel_lines(names, (fs, ft, fa)), names, (None, None, None), max_len, pb,
                                    scorer=scorer, scorer_threads=threads)

        def reordering_table() -> None:  # once counted, written beside the scorer's work
            for f in counting:
                f.result()
            if reordering is not None and rt is not None:
                reordering.write(rt, reordering_smoothing, threads=threads, gz=str(reordering_out).endswith(".gz"))

        pool = stack.enter_context(concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="reordering-table"))
        rt_done = pool.submit(reordering_table)
        try:  # the scorer extracts, sorts and merges while the counting finishes and the reordering table is written
            stats = score_native([], f2e, e2f, pt, threads=threads, memory=memory, smoothing=smoothing,
                                 tmpdir=tmpdir, feed=feed, gz=str(phrase_table).endswith(".gz"))
        except BaseException:
            for f in counting:  # (stopped before anything is published; the first error stands)
                f.cancel()
            concurrent.futures.wait([*counting, rt_done])
            raise
        rt_done.result()
        for out, text in zip(lex, (f2e, e2f)):
            out.write(text)
    return n, stats


def _extract_native(rows: Iterator[tuple[str, ...]], names: Sequence[str], outs: Sequence, max_len: int, pb,
                    reordering: ReorderCounter | None = None, lex: Sequence | None = None, *,
                    no_lines: bool = False, scorer=None, scorer_threads: int = 1, count_lag: int = 0,
                    deferred: list | None = None) -> int:
    """The C path of :func:`extract_files`: blocks of BLOCK sentence pairs through ``sb_extract_block``; a
    sentence it leaves to the reference (an odd alignment token, a point outside the pair) goes through
    :func:`_sentence_lines`, which raises the reference's error or writes its lines (and its lexical events go
    to ``sb_extract_lex_points``). Each output is written (and gzip-compressed: zlib lets go of the GIL) by a
    thread of its own while the C call, which lets go of it too, extracts the next block; at most one block's
    output waits. ``lex``: the (lex.f2e, lex.e2f) handles, written at the end; ``no_lines``: no extract line (the
    lexical counts and the orientations only). ``scorer`` (an sb_pscore whose lex tables are in:
    tm.score.score_native's ``feed``): each phrase pair goes to it as a record instead of an extract line
    (``outs[0]`` is None), the blocks' records to its ``scorer_threads`` buffers in turn; the lines the reference
    makes for a sentence are parsed into it.
    ``count_lag``: bytes of orientation lines the counting thread may have left to count when the next block's are
    handed to it (0: at most one block behind). ``deferred``: the counting not waited for at the end; its futures
    are appended there, for the caller to wait on (its other work beside the counting's tail)."""
    import itertools
    from concurrent.futures import Future, ThreadPoolExecutor

    from ..ioutil import TextFormatError, _control_name
    from ..native import check, ffi, lib
    max_len = max(min(max_len, 1 << 30), 0)
    flags = (1 if outs[1] is not None else 0) | (2 if outs[2] is not None or reordering is not None else 0) \
        | (4 if lex is not None else 0) | (8 if no_lines else 0) | (16 if scorer is not None else 0)
    st = ffi.new("sb_extract_state *")
    if scorer is not None:
        st.score = scorer
    err, errline = ffi.new("char[256]"), ffi.new("uint64_t *")
    nblock = 0
    lineno = 0  # lines before this block
    live = [k for k, out in enumerate(outs) if out is not None]
    made = sorted({*live, *([2] if reordering is not None else [])})  # outputs made: written (live) or counted
    # the orientation lines only counted (no extract.o written): a block's lines are counted by a thread of their own
    # while the next block is extracted (the counting is as long as the extraction: one core each); in the lines'
    # order, at most one block behind
    direct = reordering is not None and outs[2] is None
    writers = {k: ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract-write") for k in live}
    if direct:
        writers[-1] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract-count")
    pending: list[Future] = []  # the previous block's writes
    counting: collections.deque[tuple[Future, int]] = collections.deque()  # counts not waited for, with their bytes
    backlog = 0
    ok = False
    try:
        while True:
            block = list(itertools.islice(rows, BLOCK))
            if not block:
                break
            data = []
            for k in range(3):
                text = "".join(r[k] for r in block)
                if not text.endswith("\n"):
                    text += "\n"
                data.append(text.encode("utf-8"))
            st.pos[0] = st.pos[1] = st.pos[2] = 0
            st.next = 0
            st.score_t = nblock % scorer_threads
            nblock += 1
            parts: dict[int, list[bytes]] = {k: [] for k in made}
            while True:
                rc = lib.sb_extract_block(st, data[0], len(data[0]), data[1], len(data[1]), data[2],
                                          len(data[2]), max_len, flags)
                if rc == lib.SB_EFORMAT and st.bad_col >= 0:  # not reached through open_text (refuses first)
                    k = st.bad_stream
                    line = data[k][st.pos[k]:].split(b"\n", 1)[0]
                    raise TextFormatError(f"{names[k]}:{lineno + st.next + 1}: "
                                          f"{_control_name(line[st.bad_col])}")
                check(rc, f"extract {names[0]}")
                for k in made:
                    if st.len[k]:
                        parts[k].append(ffi.buffer(st.data[k], st.len[k])[:])
                        st.len[k] = 0
                if st.stop < 0:
                    break
                i = st.stop
                lines = _sentence_lines(*block[i], names[2], lineno + i + 1, max_len, bool(flags & 1),
                                        bool(flags & 2))
                if lex is not None:  # (after the reference's checks: its errors, whether or not lex is asked)
                    _lex_points(st, *block[i], names[2], lineno + i + 1)
                for k in made:
                    if lines[k]:
                        parts[k].append("".join(lines[k]).encode("utf-8"))
                if scorer is not None and lines[0]:
                    text = "".join(lines[0]).encode("utf-8")
                    rc = lib.sb_pscore_load_text(scorer, st.score_t, ffi.new("char[]", text), len(text), errline,
                                                 err, 256)
                    check(rc, f"scoring the phrase pairs of {names[0]} line {lineno + i + 1} "
                              f"({ffi.string(err).decode(errors='replace')})")
                st.pairs += len(lines[0])
            for f in pending:
                f.result()
            pending = [writers[k].submit(_write_all, outs[k], parts[k]) for k in live]
            if direct:
                while counting and backlog > count_lag:
                    done, size = counting.popleft()
                    done.result()
                    backlog -= size
                text = b"".join(parts[2])
                counting.append((writers[-1].submit(reordering.count_text, text,  # type: ignore[union-attr]
                                                    ORIENTATION_LINES), len(text)))
                backlog += len(text)
            elif reordering is not None:  # (a C call: the writers compress meanwhile)
                reordering.count_text(b"".join(parts[2]), ORIENTATION_LINES)
            lineno += len(block)
            pb.update(len(block))
        for f in pending:
            f.result()
        if deferred is not None:
            deferred.extend(f for f, _ in counting)
        else:
            for f, _ in counting:
                f.result()
        for which, out in enumerate(lex or ()):
            st.len[0] = 0
            check(lib.sb_extract_lex_format(st, which), f"lexical table of {names[0]}")
            out.write(ffi.buffer(st.data[0], st.len[0])[:])
        ok = True
        return int(st.pairs)
    finally:
        for k, w in writers.items():  # (the deferred counting runs on: its caller waits for it)
            w.shutdown(wait=not (ok and k == -1 and deferred is not None), cancel_futures=not ok)
        lib.sb_extract_free(st)


def _lex_points(st, ls: str, lt: str, la: str, align: str, lineno: int) -> None:
    """A sentence the C extractor left to the reference, after the reference accepted it (:func:`_sentence_lines`
    raised for a bad token or a point outside the pair): its points parsed again (a rare path) and its events
    counted by ``sb_extract_lex_points``."""
    from ..native import check, ffi, lib
    fw, ew = split_words(ls), split_words(lt)
    pts = parse_links(la, align, lineno)
    b_s, b_t = " ".join(fw).encode("utf-8"), " ".join(ew).encode("utf-8")  # (no line end: a word byte in C)
    check(lib.sb_extract_lex_points(st, b_s, len(b_s), b_t, len(b_t), ffi.new("int32_t[]", [f for f, _ in pts]),
                                    ffi.new("int32_t[]", [e for _, e in pts]), len(pts)), f"lexical counts of {align}")


#: the stream name the reordering counter's errors give for the extractor's orientation lines
ORIENTATION_LINES = "the extractor's orientation lines"


def _write_all(out, parts: list[bytes]) -> None:
    for b in parts:
        out.write(b)


def lexical_counts(src: str, tgt: str, align: str, progress: bool = False) -> tuple[Counter, Counter, Counter]:
    """c(f,e), c(f) and c(e) from the symmetrized alignment, unaligned words counted against NULL."""
    from ..progress import bar
    cfe: Counter = Counter()
    cf: Counter = Counter()
    ce: Counter = Counter()
    with open_text(src) as fs, open_text(tgt) as ft, open_text(align) as fa, \
            bar("lexical tables", unit="pair", on=progress) as pb:
        for lineno, (ls, lt, la) in enumerate(parallel_lines((src, tgt, align), (fs, ft, fa)), 1):
            pb.update()
            fw, ew = split_words(ls), split_words(lt)
            pts = parse_links(la, align, lineno)
            f_al = [False] * len(fw)
            e_al = [False] * len(ew)
            for f, e in pts:
                if not (0 <= f < len(fw) and 0 <= e < len(ew)):
                    raise AlignmentFormatError(f"{align}:{lineno}: point {f}-{e} outside the sentence pair")
                f_al[f] = e_al[e] = True
                cfe[fw[f], ew[e]] += 1
                cf[fw[f]] += 1
                ce[ew[e]] += 1
            for e, w in enumerate(ew):
                if not e_al[e]:
                    cfe["NULL", w] += 1
                    ce[w] += 1
                    cf["NULL"] += 1
            for f, w in enumerate(fw):
                if not f_al[f]:
                    cfe[w, "NULL"] += 1
                    cf[w] += 1
                    ce["NULL"] += 1
    return cfe, cf, ce


def _lex_text(cfe: Counter, cf: Counter, ce: Counter) -> tuple[str, str]:
    """lex.f2e (`e f p(e|f)`) and lex.e2f (`f e p(f|e)`), lines in (f, e) order."""
    pairs = sorted(cfe.items())
    return ("".join(f"{e} {f} {c / cf[f]:.7f}\n" for (f, e), c in pairs),
            "".join(f"{f} {e} {c / ce[e]:.7f}\n" for (f, e), c in pairs))


def write_lex(cfe: Counter, cf: Counter, ce: Counter, f2e_out: str, e2f_out: str) -> None:
    with atomic_open(f2e_out) as o1, atomic_open(e2f_out) as o2:
        t1, t2 = _lex_text(cfe, cf, ce)
        o1.write(t1)
        o2.write(t2)


def lex_files(src: str, tgt: str, align: str, f2e_out: str, e2f_out: str, progress: bool = False) -> None:
    write_lex(*lexical_counts(src, tgt, align, progress), f2e_out, e2f_out)
