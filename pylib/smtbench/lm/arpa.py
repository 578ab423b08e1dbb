"""ARPA back-off language models: a fast reader (C parser in csrc/lm/arpa.c) and a KenLM-style writer.

``read_arpa(path)`` accepts plain, ``.gz`` and ``.xz`` files and returns an :class:`ArpaModel` whose
n-grams are numpy arrays (no per-line Python objects). Word ids follow the order in which the
unigrams appear; ``<UNK>`` is read as ``<unk>``; a missing ``<unk>`` is appended last with
log10 p = -100 (KenLM's default). Malformed input raises :class:`ArpaFormatError`
(``path:lineno: what is wrong``).
"""
from __future__ import annotations

import contextlib
import lzma
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ..ioutil import atomic_open, open_binary, open_text
from ..native import check, ffi, lib
from ..resources import require_memory

_CHUNK = 1 << 24


class ArpaFormatError(ValueError):
    """Malformed ARPA input; the message is ``path:lineno: what is wrong``."""


@dataclass
class NgramTable:
    """All n-grams of one order, in file order."""

    ids: np.ndarray      # (count, n) uint32, word ids in text order w1..wn
    logprob: np.ndarray  # (count,) float32 log10 p
    backoff: np.ndarray  # (count,) float32 log10 back-off, 0.0 where absent (always 0 at the top order)

    def __len__(self) -> int:
        return int(self.logprob.shape[0])

    @property
    def order(self) -> int:
        return int(self.ids.shape[1])


@dataclass
class ArpaModel:
    order: int
    vocab: list[str]                      # id -> word
    word_id: dict[str, int] = field(repr=False)
    ngrams: list[NgramTable] = field(repr=False)  # ngrams[n-1] is order n

    @property
    def counts(self) -> list[int]:
        return [len(t) for t in self.ngrams]

    def nbytes(self) -> int:
        return sum(t.ids.nbytes + t.logprob.nbytes + t.backoff.nbytes for t in self.ngrams)


def read_arpa(path: str | os.PathLike[str]) -> ArpaModel:
    """Read an ARPA file (plain/.gz/.xz). Raises ArpaFormatError naming the file and line."""
    path = os.fspath(path)
    p_out = ffi.new("sb_arpa **")
    check(lib.sb_arpa_new(p_out), "arpa parser")
    p = ffi.gc(p_out[0], lib.sb_arpa_free)
    consumed = ffi.new("size_t *")
    need = ffi.new("int *")
    arrays: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def fail(rc: int) -> None:
        if rc == lib.SB_EFORMAT:
            line = int(lib.sb_arpa_error_line(p))
            msg = ffi.string(lib.sb_arpa_error_message(p)).decode("utf-8", "replace")
            raise ArpaFormatError(f"{path}:{line}: {msg}")
        check(rc, f"reading {path}")

    def allocate() -> None:
        order = int(lib.sb_arpa_order(p))
        counts = [int(lib.sb_arpa_count(p, n)) for n in range(1, order + 1)]
        need_bytes = sum(c * (4 * n + 8) for n, c in enumerate(counts, 1))
        require_memory(need_bytes + (16 << 20), f"reading {path} ({sum(counts)} n-grams)")
        for n, c in enumerate(counts, 1):
            cap = c + 1 if n == 1 else c
            ids = np.empty((cap, n), dtype=np.uint32)
            prob = np.empty(cap, dtype=np.float32)
            bo = np.zeros(cap, dtype=np.float32)
            arrays.append((ids, prob, bo))
            check(lib.sb_arpa_set_buffers(p, n, ffi.cast("uint32_t *", ffi.from_buffer(ids)),
                                          ffi.cast("float *", ffi.from_buffer(prob)),
                                          ffi.cast("float *", ffi.from_buffer(bo)), cap), "arpa buffers")

    def feed(data: bytes) -> None:
        view = memoryview(data)
        off = 0
        while off < len(data):
            rc = lib.sb_arpa_feed(p, ffi.from_buffer(view[off:]), len(data) - off, consumed, need)
            if rc:
                fail(rc)
            off += int(consumed[0])
            if need[0]:
                allocate()

    with open_binary(path) as fh:
        rest = b""
        while True:
            try:
                chunk = fh.read(_CHUNK)
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise ArpaFormatError(f"{path}:0: cannot decompress: {exc}") from exc
            if not chunk:
                break
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            feed(data[:cut + 1])
            rest = data[cut + 1:]
        if rest:
            feed(rest)
    rc = lib.sb_arpa_finish(p)
    if rc:
        fail(rc)

    order = int(lib.sb_arpa_order(p))
    nv = int(lib.sb_arpa_vocab_size(p))
    buf = ffi.new("char[]", int(lib.sb_arpa_vocab_bytes(p)) + 1)
    check(lib.sb_arpa_vocab_dump(p, buf, int(lib.sb_arpa_vocab_bytes(p)) + 1), "arpa vocab")
    raw = ffi.buffer(buf, int(lib.sb_arpa_vocab_bytes(p)))[:]
    try:
        vocab = raw.decode("utf-8").split("\n")[:nv]
    except UnicodeDecodeError as exc:
        raise ArpaFormatError(f"{path}:0: the vocabulary is not valid UTF-8 ({exc})") from exc
    tables = []
    for n, (ids, prob, bo) in enumerate(arrays, 1):
        filled = int(lib.sb_arpa_filled(p, n))
        if filled != len(prob):
            ids, prob, bo = ids[:filled], prob[:filled], bo[:filled]
        tables.append(NgramTable(ids, prob, bo))
    return ArpaModel(order=order, vocab=vocab, word_id={w: i for i, w in enumerate(vocab)}, ngrams=tables)


def _fmt(values: np.ndarray) -> list[str]:
    """Shortest round-trip text of float32 values (KenLM/lmplz print floats this way)."""
    out = []
    for v in values.tolist():
        f = np.float32(v)
        s = repr(float(f)) if f != f else np.format_float_positional(f, unique=True, trim="-")
        out.append("0" if s in ("0", "-0") else s)
    return out


def write_arpa(model: ArpaModel, path: str | os.PathLike[str]) -> None:
    """Write ``model`` as ARPA (atomically; ``.gz`` compressed when the name says so). Back-offs are
    written for every order below the highest, as lmplz does."""
    vocab = model.vocab
    with atomic_open(path, "w") as fh:
        fh.write("\\data\\\n")
        for n, t in enumerate(model.ngrams, 1):
            fh.write(f"ngram {n}={len(t)}\n")
        for n, t in enumerate(model.ngrams, 1):
            fh.write(f"\n\\{n}-grams:\n")
            top = n == model.order
            step = 1 << 16
            for s in range(0, len(t), step):
                probs = _fmt(t.logprob[s:s + step])
                bos = None if top else _fmt(t.backoff[s:s + step])
                rows = t.ids[s:s + step].tolist()
                lines = []
                for i, row in enumerate(rows):
                    words = " ".join(vocab[w] for w in row)
                    lines.append(f"{probs[i]}\t{words}\n" if top else f"{probs[i]}\t{words}\t{bos[i]}\n")  # type: ignore[index]
                fh.write("".join(lines))
        fh.write("\n\\end\\\n")


def missing_context(model: ArpaModel) -> tuple[int, int] | None:
    """(order, row) of the first n-gram whose context w1..wn-1 is not an (n-1)-gram, or None. KenLM refuses such
    models in both its structures ("The context of every N-gram should appear as a (N-1)-gram")."""
    for n in range(2, model.order + 1):
        hi = np.ascontiguousarray(model.ngrams[n - 1].ids[:, : n - 1], dtype=np.uint32)
        lo = np.ascontiguousarray(model.ngrams[n - 2].ids, dtype=np.uint32)
        if not len(hi):
            continue
        dt = np.dtype((np.void, 4 * (n - 1)))
        found = np.isin(hi.view(dt).ravel(), lo.view(dt).ravel())
        if not found.all():
            return n, int(np.argmin(found))
    return None


def synthetic_label(arpa: str) -> str:
    """The '# SYNTHETIC ...' comment the estimator writes above \\data\\ (empty for real models)."""
    with open_text(arpa, strict=False) as fh:  # ARPA: KenLM's blanks (space, \t, \r), not the line rule
        for _ in range(20):
            line = fh.readline()
            if not line or line.startswith("\\data\\"):
                break
            if line.startswith("#") and "SYNTHETIC" in line.upper():
                return line.lstrip("# ").strip()
    return ""


@contextlib.contextmanager
def plain_arpa(path: str) -> Iterator[str]:
    """kenlm's module here reads no .gz/.xz: decompress into a temporary file when needed."""
    if not (path.endswith(".gz") or path.endswith(".xz")):
        yield path
        return
    from ..ioutil import removed_on_signal
    d = tempfile.mkdtemp(prefix="smtbench-arpa-", dir=os.environ.get("TMPDIR") or str(Path(path).parent))
    try:
        with removed_on_signal(d):  # a decompressed model is large: SIGTERM/SIGINT remove it too
            plain = os.path.join(d, "model.arpa")
            with open_binary(path) as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 24)
            yield plain
    finally:
        shutil.rmtree(d, ignore_errors=True)
