"""Seeded synthetic text drawn from an ARPA model (csrc/lm/lmsample.c): exact back-off sampling.

The output is SYNTHETIC text: every file written here gets a sidecar ``<out>.json`` with
``"synthetic": true``, the source model, the seed and the counts, and the workflow names such files and the
models estimated on them ``synth-...``.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..ioutil import atomic_write_text
from .estimate import check_writable, fast_atomic_out
from ..native import as_ptr, check, ffi, lib
from ..resources import require_memory


@dataclass
class SampleStats:
    synthetic: bool
    source_arpa: str
    seed: int
    words: int
    sentences: int
    backoffs: int
    rejections: int
    seconds: float
    words_per_second: float


class Sampler:
    """An ARPA model prepared for sampling."""

    def __init__(self, model):
        from .arpa import ArpaModel  # noqa: F401  (type of `model`)
        self.model = model
        order = model.order
        if order < 2:
            raise ValueError("sampling needs a model of order >= 2")
        counts = [len(t) for t in model.ngrams]
        need = sum(c * (4 * n + 30) for n, c in enumerate(counts, 1)) + len(model.vocab) * 8
        require_memory(need, "the sampling tables")
        cnt = ffi.new("uint64_t[]", counts)
        out = ffi.new("sb_lms **")
        check(lib.sb_lms_create(order, cnt, len(model.vocab), out), "sampler create")
        self._s = ffi.gc(out[0], lib.sb_lms_free)
        for n, t in enumerate(model.ngrams, 1):
            ids = np.ascontiguousarray(t.ids, dtype=np.uint32)
            lp = np.ascontiguousarray(t.logprob, dtype=np.float32)
            check(lib.sb_lms_set_order(self._s, n, as_ptr("uint32_t *", ids), as_ptr("float *", lp)),
                  f"sampler order {n}")
        wid = model.word_id
        for w in ("<s>", "</s>"):
            if w not in wid:
                raise ValueError(f"the model has no {w}: cannot sample sentences")
        unk = wid.get("<unk>", wid.get("<UNK>", 0))
        check(lib.sb_lms_finalize(self._s, wid["<s>"], wid["</s>"], unk),
              "sampler tables (every n-gram's context must be an (n-1)-gram; words must be unigrams)")
        enc = [w.encode("utf-8") for w in model.vocab]
        self._off = np.zeros(len(enc) + 1, dtype=np.uint64)
        np.cumsum([len(w) for w in enc], out=self._off[1:])
        self._blob = ffi.new("char[]", b"".join(enc) + b"\0")

    def state(self, seed: int):
        st = ffi.new("sb_lms_state *")
        lib.sb_lms_seed(self._s, st, seed & (2**64 - 1))
        return st

    def draw_ids(self, n: int, seed: int) -> np.ndarray:
        """n word ids (</s> included) from a fresh seeded state."""
        out = np.zeros(n, dtype=np.uint32)
        check(lib.sb_lms_draw_ids(self._s, self.state(seed), as_ptr("uint32_t *", out), n), "sampler draw")
        return out

    def write(self, out: str | os.PathLike[str], words: int, seed: int, *, progress: bool = False,
              source: str = "") -> SampleStats:
        from tqdm import tqdm
        if words < 1:
            raise ValueError(f"--words must be >= 1, got {words}")
        st = self.state(seed)
        cap = 8 << 20
        buf = ffi.new("char[]", cap)
        written = ffi.new("size_t *")
        offp = as_ptr("uint64_t *", self._off)
        t0 = time.perf_counter()
        with fast_atomic_out(out) as fh, tqdm(total=words, desc="lm sample", unit="w", unit_scale=True,
                                                disable=not progress, file=sys.stderr, mininterval=0.5) as bar:
            while st.words < words:
                before = st.words
                check(lib.sb_lms_generate(self._s, st, words, self._blob, offp, buf, cap, written), "sampler")
                fh.write(ffi.buffer(buf, written[0]))
                bar.update(int(st.words) - before)
        secs = time.perf_counter() - t0
        stats = SampleStats(synthetic=True, source_arpa=source, seed=seed, words=int(st.words),
                            sentences=int(st.sentences), backoffs=int(st.backoffs), rejections=int(st.rejections),
                            seconds=secs, words_per_second=int(st.words) / secs if secs > 0 else 0.0)
        atomic_write_text(sidecar(out), json.dumps(asdict(stats), indent=1) + "\n")
        return stats


def sidecar(path: str | os.PathLike[str]) -> Path:
    """The JSON label written beside a synthetic text."""
    p = Path(path)
    return p.with_name(p.name + ".json")


def sample(arpa: str | os.PathLike[str], out: str | os.PathLike[str], words: int, seed: int, *,
           progress: bool = False) -> SampleStats:
    """Draw ``words`` words of synthetic text from ``arpa`` into ``out`` (atomic; .gz aware)."""
    from .arpa import read_arpa
    if words < 1:
        raise ValueError(f"--words must be >= 1, got {words}")
    check_writable(out)
    model = read_arpa(arpa)
    return Sampler(model).write(out, words, seed, progress=progress, source=str(arpa))
