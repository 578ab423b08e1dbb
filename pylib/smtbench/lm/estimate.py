"""Interpolated modified Kneser-Ney estimation, lmplz's rules (csrc/lm/kn.c), written as an ARPA file.

``estimate(text, order, arpa)`` reads whitespace-tokenized text (one sentence per line; plain, .gz or .xz),
numbers the words (``<unk>`` 0, ``<s>`` 1, ``</s>`` 2, then first-seen order, like lmplz), counts and sorts
n-grams in C with a memory budget, and writes the ARPA atomically (``.gz`` aware).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from ..ioutil import atomic_open, atomic_path, open_text
from ..ioutil import words as split_words
from ..native import as_ptr, check, ffi, lib
from ..resources import require_memory
from .. import procs

MAX_ORDER = int(lib.SB_KN_MAX_ORDER)
SPECIAL = ("<s>", "</s>", "<unk>")
_PUSH = 1 << 20  # tokens handed to C per call


class EstimateError(ValueError):
    """Bad input for the estimator (message names the file and line)."""


@dataclass
class EstimateStats:
    order: int
    text: str
    sentences: int = 0
    tokens: int = 0          # words + one </s> per sentence
    vocab: int = 0           # unigram types incl. <unk>, <s>, </s>
    counts: list[int] = field(default_factory=list)
    discounts: list[list[float]] = field(default_factory=list)  # per order: D1, D2, D3+
    discount_fallback_orders: list[int] = field(default_factory=list)
    c_peak_bytes: int = 0
    memory_estimate_bytes: int = 0
    seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def parse_size(text: str | int) -> int:
    """'4G', '512M', '100k', '1073741824' -> bytes."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?\s*", str(text))
    if not m:
        raise ValueError(f"cannot parse memory size {text!r} (use e.g. 512M, 4G)")
    mult = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def chunk_tokens_for(order: int, memory: int) -> int:
    """Tokens per counting chunk: the chunk's records and their sort buffer take about half the budget."""
    per_token = 2 * (order + 1) * 4 + 8
    return max(1 << 16, int(memory * 0.5) // per_token)


@contextlib.contextmanager
def fast_atomic_out(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Binary output that appears whole or not at all. ``.gz`` goes through an external ``gzip -1`` (a second
    core compresses while we format; level 1 because ARPA files here reach gigabytes); other names, or no
    gzip binary, fall back to ``ioutil.atomic_open``."""
    target = Path(path)
    gz = shutil.which("gzip")
    if target.suffix != ".gz" or gz is None:
        with atomic_open(target, "wb") as fh:
            yield fh
        return
    proc = None
    try:
        with atomic_path(target) as tmp, open(tmp, "wb") as raw:
            proc = procs.Popen([gz, "-1", "-c", "-n"], stdin=subprocess.PIPE, stdout=raw)
            try:
                yield proc.stdin
            finally:
                proc.stdin.close()
                rc = proc.wait()
            if rc != 0:
                raise OSError(f"{target}: gzip exited with status {rc}")
    except BaseException:
        if proc is not None and proc.poll() is None:
            proc.kill()
        raise


def check_writable(path: str | os.PathLike[str]) -> None:
    """Fail early (ValueError, exit 2 in the CLI) when ``path`` cannot be created, before any long work."""
    target = Path(path)
    parent = target.parent
    for p in [parent, *parent.parents]:
        if p.exists():
            if not p.is_dir():
                raise EstimateError(f"{target}: cannot write the output: {p} is not a directory")
            if not os.access(p, os.W_OK | os.X_OK):
                raise EstimateError(f"{target}: cannot write the output: {p} is not writable")
            break
    if target.is_dir():
        raise EstimateError(f"{target}: cannot write the output: it is a directory")


def _progress(total: int | None, desc: str, enabled: bool, unit: str = "it"):
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, disable=not enabled,
                file=sys.stderr, mininterval=0.5)


class _Estimator:
    def __init__(self, order: int, memory: int):
        if not isinstance(order, int) or not 2 <= order <= MAX_ORDER:
            raise EstimateError(f"order must be an integer in 2..{MAX_ORDER}, got {order!r}")
        out = ffi.new("sb_kn **")
        check(lib.sb_kn_create(order, chunk_tokens_for(order, memory), out), "kn create")
        self._kn = ffi.gc(out[0], lib.sb_kn_free)
        self.order = order

    def add(self, ids: array) -> None:
        a = np.frombuffer(ids, dtype=np.uint32)
        check(lib.sb_kn_add(self._kn, as_ptr("uint32_t *", a), len(a)), "kn add (counting n-grams)")


def read_corpus(path: str | os.PathLike[str], est: _Estimator, progress: bool = False) -> tuple[list[str], int, int]:
    """Number the words of ``path`` and feed whole sentences to ``est``. Returns (vocab, sentences, tokens)."""
    vocab: dict[str, int] = {"<unk>": 0, "<s>": 1, "</s>": 2}
    words: list[str] = ["<unk>", "<s>", "</s>"]
    buf = array("I")
    sentences = tokens = 0
    size = os.path.getsize(path)
    getitem = vocab.__getitem__
    with open_text(path) as fh, _progress(size if not str(path).endswith((".gz", ".xz")) else None,
                                          "lm estimate: reading", progress, "B") as bar:
        for lineno, line in enumerate(fh, 1):
            toks = split_words(line)
            try:
                ids = list(map(getitem, toks))
            except KeyError:
                ids = []
                for w in toks:
                    i = vocab.get(w)
                    if i is None:
                        i = vocab[w] = len(words)
                        words.append(w)
                    ids.append(i)
            if ids and min(ids) < 3:
                bad = next(w for w in toks if w in SPECIAL)
                raise EstimateError(f"{path}:{lineno}: special word {bad} is not allowed in the training text "
                                    "(lmplz refuses it too)")
            buf.extend(ids)
            buf.append(2)
            sentences += 1
            tokens += len(ids) + 1
            if len(buf) >= _PUSH:
                est.add(buf)
                buf = array("I")
                bar.update(fh.buffer.tell() - bar.n if hasattr(fh, "buffer") and bar.total else 0)
        if buf:
            est.add(buf)
        if bar.total:
            bar.update(bar.total - bar.n)
    if tokens == sentences:
        raise EstimateError(f"{path}: no words to estimate a model from (empty text)")
    if len(words) >= 2**32 - 1:
        raise EstimateError(f"{path}: vocabulary too large")
    return words, sentences, tokens


def estimate(text: str | os.PathLike[str], order: int, arpa: str | os.PathLike[str], *, memory: str | int = "4G",
             discount_fallback: list[float] | None = None, progress: bool = False,
             header_comment: str | None = None) -> EstimateStats:
    """Estimate an order-``order`` interpolated modified KN model of ``text`` and write it to ``arpa``."""
    t0 = time.perf_counter()
    text = str(text)
    if not Path(text).is_file():
        raise FileNotFoundError(f"{text}: no such file")
    if not isinstance(order, int) or not 2 <= order <= MAX_ORDER:
        raise EstimateError(f"order must be an integer in 2..{MAX_ORDER}, got {order!r}")
    check_writable(arpa)
    mem = parse_size(memory)
    if mem < 64 * 2**20:
        raise EstimateError(f"--memory {memory}: need at least 64M")
    require_memory(min(mem, 2 * chunk_tokens_for(order if isinstance(order, int) else 2, mem) * 8 * 7),
                   "the n-gram counting buffers")
    if discount_fallback is not None:
        fb = list(discount_fallback) + [discount_fallback[-1]] * (3 - len(discount_fallback)) \
            if discount_fallback else [0.5, 1.0, 1.5]
        for k, d in enumerate(fb[:3], 1):
            if not 0.0 <= d <= k:
                raise EstimateError(f"discount fallback D{k}={d} must lie in [0, {k}]")
        discount_fallback = fb[:3]
    est = _Estimator(order, mem)
    stats = EstimateStats(order=order, text=text)
    vocab, stats.sentences, stats.tokens = read_corpus(text, est, progress)
    stats.vocab = len(vocab)
    kn = est._kn
    stages = ["count"] + [f"adjust {n}" for n in range(order - 1, 0, -1)] + ["discounts"] + \
        [f"probs {n}" for n in range(1, order + 1)]
    with _progress(len(stages), "lm estimate: stages", progress) as bar:
        rc = lib.sb_kn_finish_counts(kn, len(vocab))
        if rc == lib.SB_EINVAL:  # the words are there (read_corpus checked): the highest order has no n-gram
            raise EstimateError(f"{text}: no {order}-gram in the text (every sentence, with <s> and </s>, is "
                                f"shorter than {order} tokens; {stats.sentences} sentence(s), "
                                f"{stats.tokens - stats.sentences} words): too little text for this order; use a "
                                "smaller order or more text")
        check(rc, "kn count")
        # Memory estimate for the rest: each order holds at most about as many n-grams as the highest order
        # (4n+16 bytes each), plus the suffix sort buffers of one adjust step.
        top = int(lib.sb_kn_size(kn, order))
        stats.memory_estimate_bytes = int(lib.sb_kn_bytes(kn)) + top * (
            sum(4 * n + 16 for n in range(1, order)) + 8 * order)
        require_memory(stats.memory_estimate_bytes, f"estimating an order-{order} model of {text} "
                       f"({top} distinct {order}-grams)")
        bar.update()
        for n in range(order - 1, 0, -1):
            bar.set_postfix_str(f"adjust {n}")
            check(lib.sb_kn_adjust(kn, n), f"kn adjust order {n}")
            bar.update()
        disc = ffi.new("double[]", 4 * order)
        coc = ffi.new("uint64_t[]", 5 * order)
        bad = ffi.new("int *")
        fb = ffi.new("double[]", discount_fallback) if discount_fallback else ffi.NULL
        rc = lib.sb_kn_discounts(kn, fb, disc, coc, bad)
        if rc == lib.SB_KN_EDISCOUNT:
            n = bad[0]
            c = [int(coc[(n - 1) * 5 + k]) for k in range(1, 5)]
            raise EstimateError(
                f"{text}: bad discounts for order {n} (counts of counts n1..n4 = {c}); the text is too small "
                "or too repetitive — use --discount-fallback (lmplz: --discount_fallback)")
        check(rc, "kn discounts")
        if bad[0]:
            stats.discount_fallback_orders = [n for n in range(1, order + 1)
                                              if _bad(coc, n)]
        stats.discounts = [[float(disc[(n - 1) * 4 + k]) for k in range(1, 4)] for n in range(1, order + 1)]
        bar.update()
        for n in range(1, order + 1):
            bar.set_postfix_str(f"probs {n}")
            check(lib.sb_kn_probs(kn, n), f"kn probs order {n}")
            bar.update()
    stats.counts = [int(lib.sb_kn_size(kn, n)) for n in range(1, order + 1)]
    stats.c_peak_bytes = int(lib.sb_kn_peak_bytes(kn))
    write_arpa_from_kn(kn, order, vocab, stats.counts, arpa, progress=progress, header_comment=header_comment)
    stats.seconds = time.perf_counter() - t0
    return stats


def _bad(coc, n: int) -> bool:
    c = [int(coc[(n - 1) * 5 + k]) for k in range(5)]
    if not (c[1] and c[2] and c[3]):
        return True
    y = c[1] / (c[1] + 2.0 * c[2])
    return any(not 0.0 <= k - (k + 1) * y * c[k + 1] / c[k] <= k for k in (1, 2, 3))


def write_arpa_from_kn(kn, order: int, vocab: list[str], counts: list[int], arpa: str | os.PathLike[str], *,
                       progress: bool = False, header_comment: str | None = None) -> None:
    """Write the estimated model as ARPA text (atomically; gzip when the name ends in .gz)."""
    enc = [w.encode("utf-8") for w in vocab]
    off = np.zeros(len(enc) + 1, dtype=np.uint64)
    np.cumsum([len(w) for w in enc], out=off[1:])
    blob = b"".join(enc)
    blob_c = ffi.from_buffer(blob) if blob else ffi.new("char[]", 1)
    cap = 8 << 20
    buf = ffi.new("char[]", cap)
    written = ffi.new("size_t *")
    nxt = ffi.new("uint64_t *")
    offp = as_ptr("uint64_t *", off)
    with fast_atomic_out(arpa) as fh, _progress(sum(counts), "lm estimate: writing ARPA", progress) as bar:
        head = []
        if header_comment:
            head += [f"# {line}" for line in header_comment.splitlines()] + [""]
        head += ["\\data\\"] + [f"ngram {n}={c}" for n, c in enumerate(counts, 1)] + [""]
        fh.write(("\n".join(head) + "\n").encode())
        for n in range(1, order + 1):
            fh.write(f"\\{n}-grams:\n".encode())
            start = 0
            while start < counts[n - 1]:
                check(lib.sb_kn_format(kn, n, start, ffi.cast("char *", blob_c), offp, buf, cap, written, nxt),
                      f"kn format order {n}")
                fh.write(ffi.buffer(buf, written[0]))
                bar.update(int(nxt[0]) - start)
                start = int(nxt[0])
            fh.write(b"\n")
        fh.write(b"\\end\\\n")


def synthetic_label(text: str | os.PathLike[str], source: str | None = None) -> dict:
    """{'synthetic': bool, 'synthetic_source': ..., 'comment': ...} from --synthetic-source or <text>.json."""
    side = Path(str(text) + ".json")
    meta = {}
    if side.is_file():
        try:
            meta = json.loads(side.read_text())
        except ValueError:
            meta = {}
    if source is None and meta.get("synthetic"):
        source = meta.get("source_arpa", "unknown")
    if source is None:
        return {"synthetic": False, "synthetic_source": None, "comment": ""}
    comment = (f"SYNTHETIC model: estimated on text sampled from {source}"
               + (f" (seed {meta['seed']}, {meta['words']} words)" if "seed" in meta else ""))
    return {"synthetic": True, "synthetic_source": source, "comment": comment}


def _arpa_values(path: str | os.PathLike[str]) -> dict[tuple[str, ...], tuple[float, float]]:
    out: dict[tuple[str, ...], tuple[float, float]] = {}
    order = 0
    with open_text(path, strict=False) as fh:  # ARPA: KenLM's blanks (space, \t, \r), not the line rule
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("\\") and line.endswith("-grams:"):
                order = int(line[1:line.index("-")])
                continue
            if not order or not line or line.startswith("\\"):
                continue
            f = line.split("\t")
            out[tuple(split_words(f[1].replace("\r", " ")))] = (float(f[0]), float(f[2]) if len(f) > 2 else 0.0)
    return out


def heldout_perplexity(arpa: str | os.PathLike[str], heldout: str | os.PathLike[str]) -> dict:
    """Perplexity of ``heldout`` under ``arpa`` with the kenlm module (KenLM query's conventions: </s>
    counted, <s> not). The kenlm wheel reads plain ARPA only."""
    import kenlm
    model = kenlm.Model(str(arpa))
    total = total_excl = 0.0
    tokens = oov = 0
    with open_text(heldout) as fh:
        for line in fh:
            toks = split_words(line)
            for (lp, _, is_oov) in model.full_scores(" ".join(toks), bos=True, eos=True):
                total += lp
                if is_oov:
                    oov += 1
                else:
                    total_excl += lp
            tokens += len(toks) + 1
    return {"tokens": tokens, "oov": oov, "log10_sum": total, "ppl": 10.0 ** (-total / tokens),
            "ppl_excl_oov": 10.0 ** (-total_excl / max(tokens - oov, 1))}


def parity(train: str, heldout: str, orders: list[int], lmplz: str, workdir: str, *,
           discount_fallback: bool = False, progress: bool = False) -> list[dict]:
    """Our estimator vs lmplz on the same text: held-out perplexity (kenlm module) and every n-gram."""
    rows = []
    wd = Path(workdir)
    wd.mkdir(parents=True, exist_ok=True)
    for order in orders:
        ours, ref = wd / f"ours.o{order}.arpa", wd / f"lmplz.o{order}.arpa"
        t0 = time.perf_counter()
        stats = estimate(train, order, ours, discount_fallback=[] if discount_fallback else None,
                         progress=progress)
        t_ours = time.perf_counter() - t0
        cmd = [lmplz, "-o", str(order), "-S", "2G", "-T", str(wd), "--text", str(train), "--arpa", str(ref)]
        if discount_fallback:
            cmd.append("--discount_fallback")
        t0 = time.perf_counter()
        res = procs.run(cmd, capture_output=True, text=True)
        t_ref = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"lmplz failed ({res.returncode}): {res.stderr[-2000:]}")
        p_ours, p_ref = heldout_perplexity(ours, heldout), heldout_perplexity(ref, heldout)
        a, b = _arpa_values(ours), _arpa_values(ref)
        common = a.keys() & b.keys()
        rows.append({
            "order": order, "train": str(train), "heldout": str(heldout),
            "heldout_tokens": p_ours["tokens"], "heldout_oov": p_ours["oov"],
            "ppl_ours": p_ours["ppl"], "ppl_lmplz": p_ref["ppl"],
            "ppl_rel_diff": p_ours["ppl"] / p_ref["ppl"] - 1.0,
            "ppl_excl_oov_ours": p_ours["ppl_excl_oov"], "ppl_excl_oov_lmplz": p_ref["ppl_excl_oov"],
            "ngrams_ours": len(a), "ngrams_lmplz": len(b), "ngrams_only_one_side": len(a.keys() ^ b.keys()),
            "max_abs_diff_logprob": max((abs(a[k][0] - b[k][0]) for k in common), default=float("nan")),
            "max_abs_diff_backoff": max((abs(a[k][1] - b[k][1]) for k in common), default=float("nan")),
            "seconds_ours": t_ours, "seconds_lmplz": t_ref, "discount_fallback": discount_fallback,
            "discount_fallback_orders": " ".join(map(str, stats.discount_fallback_orders)),
        })
        for p in (ours, ref):
            p.unlink()
    return rows
