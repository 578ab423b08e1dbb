"""gLM's B-tree trie language model (Bogoychev & Lopez 2016, §3–4) over csrc/lm/btree.c.

``BTreeLM(model, node_size=K)`` lays an :class:`~smtbench.lm.arpa.ArpaModel` out as one byte array:
a direct-indexed unigram root, then every other trie node as a full B-tree of node size K (keys of
a node contiguous before its values, child addresses relative and divided by 4), breadth-first.
Queries follow Eq. 2 (longest match, then the back-offs of the longer contexts), which for a
complete (unpruned) ARPA is exactly KenLM's FullScore.

A query is a row of ``order`` uint32 word ids: the predicted word, then its context most recent
first, :data:`NONE` after the context ends (sentence start or the model's order).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from ..native import as_ptr, check, ffi, lib
from ..ioutil import words as split_words
from ..resources import require_memory
from .arpa import ArpaModel, read_arpa

if TYPE_CHECKING:
    from .backends import StreamScores

NONE = 0xFFFFFFFF
MIN_K = int(lib.SB_BTREE_MIN_K)
MAX_K = int(lib.SB_BTREE_MAX_K)
MAX_ORDER = int(lib.SB_BTREE_MAX_ORDER)
MAX_INTERLEAVE = int(lib.SB_BTREE_MAX_INTERLEAVE)
DEFAULT_K = 31  # the paper's default node size (§5)
DEFAULT_INTERLEAVE = int(lib.SB_BTREE_DEFAULT_INTERLEAVE)


class BTreeModelError(ValueError):
    """The ARPA cannot be laid out as a trie (e.g. a pruned model with missing suffixes)."""


def check_node_size(k: int) -> int:
    if not isinstance(k, (int, np.integer)) or not MIN_K <= int(k) <= MAX_K:
        raise ValueError(f"B-tree node size K must be an integer in {MIN_K}..{MAX_K}, got {k!r}")
    return int(k)


@dataclass(frozen=True)
class SortedTables:
    """The trie's input: per order n >= 2, entries sorted by reversed n-gram."""

    order: int
    vocab: int
    uni_prob: np.ndarray
    uni_backoff: np.ndarray
    counts: np.ndarray      # uint64, counts[0] = vocab
    parents: np.ndarray     # uint32, concatenated orders 2..N
    keys: np.ndarray        # uint32
    probs: np.ndarray       # float32
    backoffs: np.ndarray    # float32


def sort_tables(model: ArpaModel, source: str = "model") -> SortedTables:
    """Sort every order by reversed n-gram and find each entry's trie parent (its suffix w2..wn): csrc/lm/btree.c's
    sb_btree_sort_tables (tools/device/device_rows.c builds with it too)."""
    order = model.order
    if order > MAX_ORDER:
        raise BTreeModelError(f"{source}: order {order} exceeds the supported maximum {MAX_ORDER}")
    vocab = len(model.vocab)
    if not 0 < vocab < 2**31:
        raise BTreeModelError(f"{source}: vocabulary size {vocab} must be in 1..2^31-1")
    tabs = [(np.ascontiguousarray(t.ids, dtype=np.uint32), np.ascontiguousarray(t.logprob, dtype=np.float32),
             np.ascontiguousarray(t.backoff, dtype=np.float32)) for t in model.ngrams]
    counts = np.asarray([len(p) for _, p, _ in tabs], dtype=np.uint64)
    total = int(counts[1:].sum())
    uni_prob = np.zeros(vocab, dtype=np.float32)
    uni_backoff = np.zeros(vocab, dtype=np.float32)
    parents, keys = np.empty(max(total, 1), dtype=np.uint32), np.empty(max(total, 1), dtype=np.uint32)
    probs, backoffs = np.empty(max(total, 1), dtype=np.float32), np.empty(max(total, 1), dtype=np.float32)
    keep = [ffi.from_buffer(a) for t in tabs for a in t]  # alive for the call
    ids_p = ffi.new("uint32_t *[]", [ffi.cast("uint32_t *", keep[3 * i]) for i in range(order)])
    prob_p = ffi.new("float *[]", [ffi.cast("float *", keep[3 * i + 1]) for i in range(order)])
    bo_p = ffi.new("float *[]", [ffi.cast("float *", keep[3 * i + 2]) for i in range(order)])
    bad_order, bad_row, why = ffi.new("int *"), ffi.new("uint64_t *"), ffi.new("int *")
    rc = lib.sb_btree_sort_tables(order, vocab, as_ptr("uint64_t *", counts), ids_p, prob_p, bo_p,
                                  as_ptr("float *", uni_prob), as_ptr("float *", uni_backoff),
                                  as_ptr("uint32_t *", parents), as_ptr("uint32_t *", keys),
                                  as_ptr("float *", probs), as_ptr("float *", backoffs), bad_order, bad_row, why)
    if rc == lib.SB_EFORMAT:
        n, w = int(bad_order[0]), int(why[0])
        if w == -2:
            raise BTreeModelError(f"{source}: every vocabulary word needs exactly one unigram entry")
        gram = " ".join(model.vocab[x] for x in tabs[n - 1][0][int(bad_row[0])])
        if w == -1:
            raise BTreeModelError(f"{source}: duplicate {n}-gram entries ('{gram}')")
        raise BTreeModelError(f"{source}: the {n}-gram '{gram}' has no {w}-gram suffix in the model "
                              "(pruned ARPAs with missing suffixes are not supported by the B-tree backend)")
    check(rc, f"{source}: sorting the B-tree's tables")
    del keep
    counts[0] = vocab
    return SortedTables(order, vocab, uni_prob, uni_backoff, counts, parents[:total], keys[:total], probs[:total],
                        backoffs[:total])


class BTreeLM:
    """The gLM B-tree trie over one ARPA model (CPU queries; ``smtbench.lm.cuda`` runs it on a GPU)."""

    def __init__(self, model: ArpaModel, node_size: int = DEFAULT_K, source: str = "model"):
        k = check_node_size(node_size)
        from .arpa import missing_context
        bad = missing_context(model)
        if bad is not None:  # as KenLM (probing and trie alike) and our probing LM
            n, row = bad
            words = " ".join(model.vocab[w] for w in model.ngrams[n - 1].ids[row])
            raise BTreeModelError(f"{source}: the context of the {n}-gram '{words}' is not a {n - 1}-gram "
                                  "(KenLM refuses such models too)")
        st = sort_tables(model, source)
        # rough upper bound of the array: 16 bytes per entry plus the root
        require_memory(int(st.counts.sum()) * 20 + (64 << 20), f"a B-tree LM of {int(st.counts.sum())} n-grams")
        out = ffi.new("sb_btree **")
        empty_u = np.zeros(1, dtype=np.uint32)
        empty_f = np.zeros(1, dtype=np.float32)
        check(lib.sb_btree_build(
            st.order, k, as_ptr("uint64_t *", st.counts),
            as_ptr("float *", st.uni_prob), as_ptr("float *", st.uni_backoff),
            as_ptr("uint32_t *", st.parents if len(st.parents) else empty_u),
            as_ptr("uint32_t *", st.keys if len(st.keys) else empty_u),
            as_ptr("float *", st.probs if len(st.probs) else empty_f),
            as_ptr("float *", st.backoffs if len(st.backoffs) else empty_f), out),
            f"{source}: B-tree build (K={k})")
        self._t = ffi.gc(out[0], lib.sb_btree_free)
        self.order = st.order
        self.node_size = k
        self.vocab = list(model.vocab)
        self.word_id = dict(model.word_id)
        self.unk = self.word_id.get("<unk>", 0)
        self.bos = self.word_id.get("<s>")
        self.eos = self.word_id.get("</s>")
        self.counts = [int(c) for c in st.counts]

    @classmethod
    def from_arpa(cls, path: str | os.PathLike[str], node_size: int = DEFAULT_K) -> "BTreeLM":
        return cls(read_arpa(path), node_size, source=os.fspath(path))

    # ------------------------------------------------------------------ facts
    @property
    def nbytes(self) -> int:
        """Size of the model's byte array (what is copied to the GPU)."""
        return int(lib.sb_btree_bytes(self._t))

    def data(self) -> np.ndarray:
        """A read-only uint8 view of the byte array (valid while this object lives)."""
        buf = ffi.buffer(lib.sb_btree_data(self._t), self.nbytes)
        arr = np.frombuffer(buf, dtype=np.uint8)
        arr.flags.writeable = False
        return arr

    def stats(self) -> list[dict]:
        """Per order n >= 2: trie nodes, B-stumps (one-node B-trees) and their share (§5.2), depth."""
        rows = []
        nodes = ffi.new("uint64_t *")
        stumps = ffi.new("uint64_t *")
        depth = ffi.new("int *")
        entries = ffi.new("uint64_t *")
        for n in range(2, self.order + 1):
            check(lib.sb_btree_stats(self._t, n, nodes, stumps, depth, entries), "B-tree stats")
            rows.append({"order": n, "entries": int(entries[0]), "trie_nodes": int(nodes[0]),
                         "b_stumps": int(stumps[0]),
                         "b_stump_share": (int(stumps[0]) / int(nodes[0])) if nodes[0] else 0.0,
                         "max_btree_depth": int(depth[0])})
        return rows

    @staticmethod
    def simd() -> str:
        return ffi.string(lib.sb_btree_simd()).decode()

    # ------------------------------------------------------------------ queries
    def query(self, queries: np.ndarray, interleave: int = DEFAULT_INTERLEAVE,
              threads: int = 1, stream_reuse: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(log10 p, matched n-gram length) for each row of ``queries`` (n x order uint32).
        ``stream_reuse``: rows that continue the previous row (consecutive n-grams of one token stream)
        take their back-offs from that row's walk instead of a second walk (same scores; not gLM's
        independent queries, see csrc/lm/btree.h)."""
        q = self._check_queries(queries)
        if not 0 <= interleave <= MAX_INTERLEAVE:
            raise ValueError(f"interleave must be in 0..{MAX_INTERLEAVE}, got {interleave}")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        prob = np.empty(len(q), dtype=np.float32)
        length = np.empty(len(q), dtype=np.uint8)
        flags = int(lib.SB_BTREE_STREAM_REUSE) if stream_reuse else 0
        check(lib.sb_btree_query_ex(self._t, as_ptr("uint32_t *", q), len(q), interleave, threads, flags,
                                    as_ptr("float *", prob), as_ptr("uint8_t *", length)),
              f"B-tree query (word ids must be < {len(self.vocab)})")
        return prob, length

    def query_into(self, q: np.ndarray, prob: np.ndarray, interleave: int, threads: int,
                   stream_reuse: bool = False) -> None:
        """Timing path: no checks, no allocation (q from :meth:`_check_queries`)."""
        flags = int(lib.SB_BTREE_STREAM_REUSE) if stream_reuse else 0
        check(lib.sb_btree_query_ex(self._t, as_ptr("uint32_t *", q), len(q), interleave, threads, flags,
                                    as_ptr("float *", prob), ffi.NULL), "B-tree query")

    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        q = np.ascontiguousarray(queries, dtype=np.uint32)
        if q.ndim != 2 or q.shape[1] != self.order:
            raise ValueError(f"queries must be an (n, {self.order}) array of word ids, got shape {q.shape}")
        if len(q) == 0:
            raise ValueError("empty batch: at least one query is needed")
        return q

    def ids(self, words: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.word_id.get(w, self.unk) for w in words), dtype=np.uint32)

    def sentence_queries(self, sentences: Sequence[str] | Sequence[Sequence[str]], bos: bool = True,
                         eos: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(queries, sentence index of each query, oov flag) for whitespace-split sentences."""
        return make_queries([self.ids(split_words(s) if isinstance(s, str) else s) for s in sentences],
                            self.order, self.bos if bos else None, self.eos if eos else None, self.unk)

    def full_scores(self, sentence: str, bos: bool = True, eos: bool = True) -> list[tuple[float, int, bool]]:
        """Like ``kenlm.Model.full_scores``: (log10 p, n-gram length, oov) per word (and </s>)."""
        q, _, oov = self.sentence_queries([sentence], bos, eos)
        prob, length = self.query(q)
        return [(float(p), int(n), bool(o)) for p, n, o in zip(prob, length, oov)]

    def score(self, sentence: str, bos: bool = True, eos: bool = True) -> float:
        return float(sum(p for p, _, _ in self.full_scores(sentence, bos, eos)))


def make_queries(sentences: list[np.ndarray], order: int, bos: int | None, eos: int | None,
                 unk: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised query rows for id sentences: every word (and </s> when eos is given) with its
    context back to <s> (or to the sentence start without bos), at most order-1 words."""
    lens = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    pre = 1 if bos is not None else 0
    post = 1 if eos is not None else 0
    full = lens + pre + post
    starts = np.concatenate([[0], np.cumsum(full)[:-1]]).astype(np.int64)
    toks = np.empty(int(full.sum()), dtype=np.uint32)
    for s, st, n in zip(sentences, starts, lens):
        if pre:
            toks[st] = bos
        toks[st + pre: st + pre + n] = s
        if post:
            toks[st + pre + n] = eos
    sent_of_tok = np.repeat(np.arange(len(sentences)), full)
    tok_start = np.repeat(starts, full)
    pos = np.arange(len(toks), dtype=np.int64)
    predicted = pos >= tok_start + pre  # <s> is context only
    p = pos[predicted]
    first = tok_start[predicted]
    q = np.full((len(p), order), NONE, dtype=np.uint32)
    for j in range(order):
        src = p - j
        ok = src >= first
        q[ok, j] = toks[src[ok]]
    oov = q[:, 0] == unk
    return q, sent_of_tok[predicted], oov


def stream_queries(tokens: np.ndarray, order: int) -> np.ndarray:
    """Query rows for a token stream of :func:`smtbench.lm.backends.encode_lines` (MARK|<s> starts a
    sentence and is context only): one row per other token, its context back to the sentence's <s>."""
    from .backends import SENTENCE_MARK

    tok = np.ascontiguousarray(tokens, dtype=np.uint32)
    if len(tok) == 0:
        raise ValueError("empty token stream")
    is_mark = (tok & np.uint32(SENTENCE_MARK)) != 0
    if not is_mark[0]:
        raise ValueError("a token stream must start with a sentence mark (backends.encode_lines)")
    plain = tok & np.uint32(SENTENCE_MARK - 1)
    pos = np.arange(len(tok), dtype=np.int64)
    start = np.maximum.accumulate(np.where(is_mark, pos, 0))  # the mark of each token's sentence
    p = pos[~is_mark]
    first = start[~is_mark]
    q = np.full((len(p), order), NONE, dtype=np.uint32)
    for j in range(order):
        src = p - j
        ok = src >= first
        q[ok, j] = plain[src[ok]]
    return q


class BTreeScorer:
    """``smtbench.lm.backends`` scorer over the CPU B-tree (``btree``) or its GPU copy (``btree-cuda``)."""

    def __init__(self, model: ArpaModel, name: str = "btree", node_size: int | None = None,
                 interleave: int = DEFAULT_INTERLEAVE, threads: int = 1, lm: BTreeLM | None = None):
        self.name = name
        self.lm = lm or BTreeLM(model, DEFAULT_K if node_size is None else node_size)
        self.node_size = self.lm.node_size
        self.interleave, self.threads = interleave, threads
        self.gpu = None
        if name == "btree-cuda":
            from . import cuda

            try:
                self.gpu = cuda.CudaBTreeLM(self.lm)
            except cuda.CudaUnavailable as exc:
                raise ValueError(f"backend btree-cuda cannot run here: {exc}") from exc

    @property
    def nbytes(self) -> int:
        return self.lm.nbytes

    def score_stream(self, tokens: np.ndarray) -> StreamScores:
        import time

        from .backends import StreamScores

        q = stream_queries(tokens, self.lm.order)
        t0 = time.perf_counter_ns()
        if self.gpu is not None:
            prob, length = self.gpu.query(q)
        else:
            prob, length = self.lm.query(q, self.interleave, self.threads)
        ns = time.perf_counter_ns() - t0
        assert length is not None
        return StreamScores(prob, length, float(prob.astype(np.float64).sum()), ns)


def _btree(model: ArpaModel, *, node_size: int | None = None, **_: object) -> BTreeScorer:
    return BTreeScorer(model, "btree", node_size)


def _btree_cuda(model: ArpaModel, *, node_size: int | None = None, **_: object) -> BTreeScorer:
    return BTreeScorer(model, "btree-cuda", node_size)


def _register() -> None:
    from . import backends

    backends.register("btree", _btree)
    backends.register("btree-cuda", _btree_cuda)


_register()
