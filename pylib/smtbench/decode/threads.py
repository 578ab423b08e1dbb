"""Sentence-level threads for any of the searches (csrc/pb/threads.c): T workers, each with its own workspace (pools
and recyclers, or plain malloc/free), optionally pinned; sentences streamed in, results taken back in input order."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Iterable, Iterator

from ..native import check, ffi, lib
from .search import Translation, check_sentence, entries

if TYPE_CHECKING:
    from .beam import BeamDecoder
    from .cube import CubeDecoder
    from .normal import NormalDecoder

#: the profile's components (SB_PB_PH_*), in index order
PHASES = ["idle", "lm", "phrase_table", "reordering", "search", "memory", "other"]


class ThreadedDecoder:
    """A decoder's search (``NormalDecoder``, ``CubeDecoder`` or ``BeamDecoder``: its options, its counters) on
    ``threads`` workers; output identical to the decoder's own. ``pin``: worker i on cpu
    ``pin_offset + i * pin_increment``
    (Moses2's cpu-affinity-offset / -increment); ``pool``: the Moses2 paper's 4.1 memory management (False = plain
    malloc/free); ``window``: sentences in flight (0 = 8 per thread); ``profile_us`` > 0: sample each worker's
    component at that period (:meth:`profile`)."""

    def __init__(self, decoder: NormalDecoder | CubeDecoder | BeamDecoder, threads: int = 1, pin: bool = False,
                 pin_offset: int = 0, pin_increment: int = 1, pool: bool = True, window: int = 0,
                 profile_us: int = 0):
        if not 1 <= threads <= 256:
            raise ValueError(f"--threads {threads}: must be in 1..256")
        if pin_offset < 0 or pin_increment < 0:
            raise ValueError("--pin-offset / --pin-increment must be >= 0")
        if not 0 <= window <= 1_000_000:
            raise ValueError(f"window {window}: must be in 0..1000000")
        self.model = decoder.model
        self.threads = threads
        mo = ffi.new("sb_pb_mt_opts *")
        mo.threads, mo.pin, mo.pin_offset, mo.pin_increment = threads, int(pin), pin_offset, pin_increment
        mo.window, mo.pooled, mo.profile_us = window, int(pool), profile_us
        out = ffi.new("sb_pb_mt **")
        check(lib.sb_pb_mt_new(self.model._m, decoder.kind, decoder.opts, mo, out), "starting the decoding threads")
        self._t = ffi.gc(out[0], lib.sb_pb_mt_free)
        self._decoder = decoder  # keeps opts alive

    def close(self) -> None:
        if self._t is not None:
            t, self._t = self._t, None
            ffi.gc(t, None)
            lib.sb_pb_mt_free(t)

    def _take(self, where: str) -> Translation:
        out = ffi.new("sb_pb_result **")
        c = ffi.new("sb_pb_counters *")
        st = ffi.new("sb_pb_beam_stats *")
        ns = ffi.new("uint64_t *")
        rc = lib.sb_pb_mt_take(self._t, out, c, st, ns)
        res = ffi.gc(out[0], lib.sb_pb_result_free) if out[0] != ffi.NULL else None
        check(rc, f"{where}: decoding")
        return Translation(entries(res), self._decoder.counters(c, st), int(ns[0]) / 1e9)

    def translate_many(self, lines: Iterable[str], name: str = "<input>") -> Iterator[tuple[str, Translation]]:
        """(line, translation) in input order; at most the window's sentences are held."""
        pending: list[tuple[str, str]] = []   # (line, where) in flight, oldest first
        head = 0
        for lineno, line in enumerate(lines, 1):
            where = f"{name}:{lineno}"
            text = check_sentence(line, where)
            while True:
                rc = lib.sb_pb_mt_submit(self._t, text, len(text))
                if rc != lib.SB_EFULL:
                    check(rc, f"{where}: submitting")
                    break
                yield pending[head][0], self._take(pending[head][1])
                head += 1
                if head > 4096:
                    del pending[:head]
                    head = 0
            pending.append((line, where))
        while head < len(pending):
            yield pending[head][0], self._take(pending[head][1])
            head += 1

    def translate(self, line: str, where: str = "<input>") -> Translation:
        return next(iter(self.translate_many([line], where)))[1]

    def profile(self) -> dict[str, int]:
        s = ffi.new("uint64_t[]", int(lib.SB_PB_NPH))
        lib.sb_pb_mt_profile(self._t, s)
        return {PHASES[i]: int(s[i]) for i in range(int(lib.SB_PB_NPH))}

    def table_counts(self) -> dict[str, int]:
        c = ffi.new("uint64_t[4]")
        lib.sb_pb_mt_counts(self._t, c)
        return {"lookups": int(c[0]), "cache_hits": int(c[1]), "ro_lookups": int(c[2]), "arena_bytes": int(c[3])}

    @property
    def pinned(self) -> bool:
        return bool(lib.sb_pb_mt_pinned(self._t))


#: the name the experiments call it by (experiments/moses2_scaling.py: the cube's threads)
ThreadedCubeDecoder = ThreadedDecoder
