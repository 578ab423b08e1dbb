"""The probing-hash LM (csrc/lm/lmprobe.c): KenLM's query semantics, scored sequentially or through
Mokry's automaton queue (§3.2). Backends ``sequential`` and ``automaton`` are registered in
:mod:`smtbench.lm.backends`."""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..native import NativeError, as_ptr, check, ffi, lib
from ..ioutil import words as split_words
from ..resources import require_memory
from . import backends
from .arpa import ArpaFormatError, ArpaModel, read_arpa
from .backends import SENTENCE_MARK, EncodedText, StreamScores

MAX_QUEUE = int(lib.SB_LM_MAX_QUEUE)
MAX_ORDER = int(lib.SB_LM_MAX_ORDER)


class ProbingLM:
    """Build from an :class:`ArpaModel` (or a path). ``multiplier`` = buckets per entry (KenLM's
    probing default 1.5); grown automatically if KenLM-style blanks for missing suffixes overflow."""

    def __init__(self, model: ArpaModel | str | os.PathLike[str], multiplier: float = 1.5,
                 source: str | None = None, line_aligned: bool = False):
        if not isinstance(model, ArpaModel):
            source = os.fspath(model)
            model = read_arpa(model)
        self.model = model
        self.source = source or "<model>"
        if not 1 <= model.order <= MAX_ORDER:
            raise ValueError(f"{self.source}: order {model.order} is outside 1..{MAX_ORDER}")
        self.bos, self.eos, self.unk = backends.specials(model)
        counts = ffi.new("uint64_t[]", [len(t) for t in model.ngrams])
        while True:
            need = int(lib.sb_lm_plan_bytes(model.order, counts, multiplier))
            require_memory(need, f"a probing LM of {sum(model.counts)} n-grams ({self.source})")
            out = ffi.new("sb_lm **")
            check(lib.sb_lm_new(model.order, counts, multiplier, int(line_aligned), out), "probing LM")
            m = ffi.gc(out[0], lib.sb_lm_free)
            rc = self._load(m)
            if rc == lib.SB_EFULL:
                multiplier *= 1.5
                continue
            break
        check(lib.sb_lm_set_specials(m, self.bos, self.eos, self.unk), "probing LM specials")
        self._m = m
        self.multiplier = multiplier
        self.line_aligned = line_aligned

    def _load(self, m) -> int:
        bad = ffi.new("uint64_t *")
        for n, t in enumerate(self.model.ngrams, 1):
            ids = np.ascontiguousarray(t.ids, dtype=np.uint32)
            prob = np.ascontiguousarray(t.logprob, dtype=np.float32)
            bo = np.ascontiguousarray(t.backoff, dtype=np.float32)
            rc = lib.sb_lm_load_order(m, n, as_ptr("uint32_t *", ids), as_ptr("float *", prob),
                                      as_ptr("float *", bo), len(t), bad)
            if rc == lib.SB_EFULL:
                return rc
            if rc in (lib.SB_ENOTFOUND, lib.SB_EFORMAT):
                words = " ".join(self.model.vocab[w] for w in t.ids[int(bad[0])])
                what = (f"the context of the {n}-gram '{words}' is not a {n - 1}-gram "
                        "(KenLM refuses such models too)" if rc == lib.SB_ENOTFOUND
                        else f"the {n}-gram '{words}' collides with another one")
                raise ArpaFormatError(f"{self.source}: {what}")
            check(rc, f"loading the {n}-grams")
        return 0

    @property
    def order(self) -> int:
        return self.model.order

    @property
    def nbytes(self) -> int:
        return int(lib.sb_lm_bytes(self._m))

    @property
    def blanks(self) -> int:
        return int(lib.sb_lm_blanks(self._m))

    @property
    def huge_pages(self) -> bool:
        return bool(lib.sb_lm_uses_huge_pages(self._m))

    def begin_state(self):
        """KenLM's BeginSentenceState: context <s> with its back-off (a cffi ``sb_lm_state``)."""
        st = ffi.new("sb_lm_state *")
        lib.sb_lm_begin_state(self._m, st)
        return st

    def null_state(self):
        """The empty context (KenLM's NullContextState)."""
        return ffi.new("sb_lm_state *")

    def score(self, state, word: str | int):
        """One KenLM FullScore step: (log10 p, new state, matched length). ``word`` is a string
        (OOV -> <unk>) or an id."""
        wid = word if isinstance(word, int) else self.model.word_id.get(word, self.unk)
        out = ffi.new("sb_lm_state *")
        nlen = ffi.new("int *")
        p = lib.sb_lm_score(self._m, state, wid, out, nlen)
        return float(p), out, int(nlen[0])

    def score_batch(self, states, words: Sequence[int], queue_size: int = 0):
        """Many independent (state, word id) queries at once (the decoders' API): (out-states, log10 p as a
        float32 array, matched lengths as a uint8 array). ``states`` is a cffi ``sb_lm_state[]`` of len(words);
        queue_size 0 = one after another, 1..16 = the automaton queue; results are identical either way."""
        n = len(words)
        if not 0 <= queue_size <= MAX_QUEUE:
            raise ValueError(f"queue size {queue_size}: must be in 0..{MAX_QUEUE}")
        w = np.ascontiguousarray(words, dtype=np.uint32)
        out = ffi.new("sb_lm_state[]", max(n, 1))
        probs = np.empty(n, dtype=np.float32)
        lengths = np.empty(n, dtype=np.uint8)
        check(lib.sb_lm_score_batch(self._m, states, as_ptr("uint32_t *", w), n, queue_size, out,
                                    as_ptr("float *", probs), as_ptr("uint8_t *", lengths)), "LM batch")
        return out, probs, lengths

    @staticmethod
    def state_words(state) -> list[int]:
        """The context word ids of a state, most recent first (right-state minimised)."""
        return [int(state.words[i]) for i in range(state.length)]

    def encode(self, lines: Sequence[str]) -> EncodedText:
        return backends.encode_lines(self.model, lines)

    def score_stream(self, tokens: np.ndarray, queue_size: int = 0, prefetch_all: bool = False) -> StreamScores:
        """Score a token stream (backends.encode_lines); queue_size 0 = sequential, 1..16 = automaton queue.
        ``prefetch_all``: when a query starts, the buckets of all its n-grams are requested at once (the scores
        are the same bit for bit; csrc/lm/lmprobe.c)."""
        if not 0 <= queue_size <= MAX_QUEUE:
            raise ValueError(f"queue size must be in 0..{MAX_QUEUE}, got {queue_size}")
        tok = np.ascontiguousarray(tokens, dtype=np.uint32)
        nq = int(np.count_nonzero((tok & np.uint32(SENTENCE_MARK)) == 0))
        probs = np.empty(nq, dtype=np.float32)
        lens = np.empty(nq, dtype=np.uint8)
        s = ffi.new("double *")
        q = ffi.new("uint64_t *")
        ns = ffi.new("uint64_t *")
        flags = int(lib.SB_LM_PREFETCH_ALL) if prefetch_all else 0
        rc = lib.sb_lm_score_stream(self._m, as_ptr("uint32_t *", tok), len(tok), queue_size, flags,
                                    as_ptr("float *", probs), as_ptr("uint8_t *", lens), s, q, ns)
        if rc == lib.SB_EINVAL:
            raise ValueError("token stream must start with a sentence mark and hold only ids of this model")
        check(rc, "probing LM scoring")
        if int(q[0]) != nq:
            raise NativeError(lib.SB_EINVAL, "probing LM scoring: query count mismatch")
        return StreamScores(probs, lens, float(s[0]), int(ns[0]))

    def score_sentence(self, words: Sequence[str] | str, queue_size: int = 0) -> list[tuple[float, int]]:
        """Per-word (log10 p, matched length) for ``words`` and the final ``</s>``, from ``<s>``."""
        if isinstance(words, str):
            words = split_words(words)
        enc = backends.encode_lines(self.model, [" ".join(words)])
        r = self.score_stream(enc.tokens, queue_size)
        return [(float(p), int(n)) for p, n in zip(r.logprob.tolist(), r.length.tolist())]

    def score_corpus(self, ids: np.ndarray | EncodedText, backend: str = "sequential",
                     queue_size: int = 0) -> StreamScores:
        tokens = ids.tokens if isinstance(ids, EncodedText) else ids
        if backend == "sequential":
            return self.score_stream(tokens, 0)
        if backend == "automaton":
            return self.score_stream(tokens, queue_size or 8)
        raise ValueError(f"ProbingLM has backends 'sequential' and 'automaton', not {backend!r}")


class _ProbingScorer:
    def __init__(self, lm: ProbingLM, name: str, queue_size: int, prefetch_all: bool = False):
        self.lm, self.name, self.queue_size, self.prefetch_all = lm, name, queue_size, prefetch_all

    @property
    def nbytes(self) -> int:
        return self.lm.nbytes

    def score_stream(self, tokens: np.ndarray) -> StreamScores:
        return self.lm.score_stream(tokens, self.queue_size, self.prefetch_all)


def _factory(name: str, automaton: bool, line_aligned: bool = False, prefetch_all: bool = False):
    """The backend `name`: our probing LM scored sequentially or through the automaton queue (queue_size, default 8),
    in KenLM's layout or line-aligned, with or without every order's bucket requested when a query starts."""
    def make(model: ArpaModel, *, queue_size: int = 0, lm: ProbingLM | None = None, **_: object) -> _ProbingScorer:
        q = (queue_size or 8) if automaton else 0
        if automaton and not 1 <= q <= MAX_QUEUE:
            raise ValueError(f"--queue-size must be in 1..{MAX_QUEUE} for the automaton backend, got {q}")
        return _ProbingScorer(lm or ProbingLM(model, line_aligned=line_aligned), name, q, prefetch_all)
    return make


backends.register("sequential", _factory("sequential", automaton=False))
backends.register("automaton", _factory("automaton", automaton=True))
# the same LM and walks, each query's buckets of every order requested when it starts (csrc/lm/lmprobe.c)
backends.register("sequential-pf", _factory("sequential-pf", automaton=False, prefetch_all=True))
backends.register("automaton-pf", _factory("automaton-pf", automaton=True, prefetch_all=True))
# the same LM, each n-gram probed from the first bucket of its ideal bucket's cache line (csrc/lm/lmprobe.h)
backends.register("sequential-line", _factory("sequential-line", automaton=False, line_aligned=True))
backends.register("automaton-line", _factory("automaton-line", automaton=True, line_aligned=True))
