"""The plumbing the decoders share (normal.py, cube.py, beam.py; threads.py runs any of them): the sentence checks,
the C search behind :class:`Search` and its results, Moses2's n-best format, and the decoding loop of the CLIs
(1-best, n-best, segmentation, counters)."""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import IO, Any, Iterable

from ..native import check, ffi, lib
from .model import PhraseModel

MAX_WORDS = int(lib.SB_PB_MAX_WORDS)
#: the counters of the normal and the cube search (sb_pb_counters)
COUNTERS = ("created", "recombined", "beam_discarded", "pruned", "expanded")


class InputError(ValueError):
    """An input sentence the decoders refuse (the message names the input and line)."""


@dataclass
class Entry:
    text: str
    segmentation: str
    features: list[float]   # internal (SB_PB_F_*) order
    total: float            # weighted sum of the features
    search_score: float     # the score the search kept for the path


@dataclass
class Translation:
    entries: list[Entry]
    counters: dict[str, int]
    seconds: float

    @property
    def best(self) -> Entry | None:
        return self.entries[0] if self.entries else None


def entries(res) -> list[Entry]:
    out = []
    f = ffi.new("double[]", int(lib.SB_PB_NFEAT))
    for i in range(int(lib.sb_pb_result_size(res))):
        lib.sb_pb_result_features(res, i, f)
        out.append(Entry(
            text=ffi.string(lib.sb_pb_result_text(res, i, 0)).decode("utf-8"),
            segmentation=ffi.string(lib.sb_pb_result_text(res, i, 1)).decode("utf-8"),
            features=[float(f[k]) for k in range(int(lib.SB_PB_NFEAT))],
            total=float(lib.sb_pb_result_total(res, i)),
            search_score=float(lib.sb_pb_result_search_score(res, i)),
        ))
    return out


_BLANKS = re.compile(r"[ \t\r]+")


def input_words(line: str) -> list[str]:
    """A sentence's words as the decoders see them: split at spaces, tabs and carriage returns only (as the table
    readers split phrases; Moses2 splits at spaces and tabs), so a no-break space or a form feed stays inside its
    word. A word with ``|`` is read as Moses2 reads it (``Word::CreateFromString``): ``|`` separates factors, empty
    pieces are skipped and the decoders (one input factor) keep the first piece, so ``a|NN`` is ``a``."""
    words = []
    for w in _BLANKS.split(line.strip(" \t\r\n")):
        if "|" in w:
            w = next((piece for piece in w.split("|") if piece), "")
        if w:
            words.append(w)
    return words


def check_sentence(line: str, where: str) -> bytes:
    if "\0" in line:
        raise InputError(f"{where}: a NUL byte in the sentence")
    raw = _BLANKS.split(line.strip(" \t\r\n"))
    bare = [w for w in raw if w and not w.strip("|")]
    if bare:
        raise InputError(f"{where}: the word {bare[0]!r} is only factor separators ('|' separates a word's factors "
                         f"in Moses' input, as in 'word|tag')")
    words = input_words(line)
    if len(words) > MAX_WORDS:
        raise InputError(f"{where}: a sentence of {len(words)} words; the decoders take at most {MAX_WORDS}")
    return " ".join(words).encode("utf-8")


def input_lines(path: str, stdin=None) -> Iterable[str]:
    """The sentences of an input file (plain, .gz or .xz; ``-``: standard input) by the one line rule
    (``ioutil.open_text``): a line ends at ``\n`` (a CRLF's ``\r`` removed), so every input line gives one output
    line; a ``\r``, NUL or other control character inside a line and invalid UTF-8 are refused as ``input:line``."""
    import sys

    from ..ioutil import TextLines, open_text
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin
        fh = getattr(stream, "buffer", None)
        if fh is None or stream.closed:
            raise InputError("standard input is closed (give the input with -i FILE)")
        return _stripped(TextLines(fh, "<stdin>", close=False))
    return _stripped(open_text(path))


def _stripped(lines) -> Iterable[str]:
    with lines:
        for line in lines:
            yield line[:-1] if line.endswith("\n") else line


def workspace(pooled: bool = True) -> Any:
    """A workspace to keep across sentences (``sb_pb_ws *``, freed with the object), as each worker of threads.c
    keeps one: its pool, a search's scratch and caches made once, not per sentence. One thread at a time."""
    p = ffi.new("sb_pb_ws **")
    check(lib.sb_pb_ws_new(int(pooled), p), "sb_pb_ws_new")
    return ffi.gc(p[0], lib.sb_pb_ws_free)


def common_opts(opts, model: PhraseModel, stack_size: int, beam_threshold: float, distortion_limit: int | None,
                nbest: int, recombine_forward: bool) -> None:
    """Check and set the options every search shares (Moses' -s, -b, distortion limit, n-best size)."""
    if not 1 <= stack_size <= 1_000_000:
        raise ValueError(f"--stack-size {stack_size}: must be in 1..1000000")
    if not 0 <= beam_threshold <= 1:
        raise ValueError(f"--beam-threshold {beam_threshold}: must be in [0, 1] (a probability ratio)")
    if nbest < 0 or nbest > 100_000:
        raise ValueError(f"--n-best size {nbest}: must be in 0..100000")
    dl = model.config.distortion_limit if distortion_limit is None else distortion_limit
    dl = max(dl, -1)  # any negative value: no limit (Moses)
    if dl > MAX_WORDS:
        raise ValueError(f"--distortion-limit {dl}: must be < {MAX_WORDS} (negative = none)")
    opts.stack_size = stack_size
    opts.beam_width = math.log(beam_threshold) if beam_threshold > 0 else -math.inf
    opts.distortion_limit = dl
    opts.nbest = nbest
    opts.recombine_forward = int(recombine_forward)


class Search:
    """What the three decoders (normal.py, cube.py, beam.py) share: a C search (``kind``: SB_PB_SEARCH_*) with the
    options ``opts``, run on a sentence by :meth:`translate` here or on threads (threads.py), and its counters."""

    kind: int
    model: PhraseModel
    opts: Any

    def decode(self, text: bytes, out, counters, stats, ws=ffi.NULL) -> int:
        """The C search on one checked sentence in the workspace ``ws`` (:func:`workspace`; NULL: one of its own for
        the sentence); its status code."""
        raise NotImplementedError

    def counters(self, c, stats) -> dict[str, int]:
        """One sentence's JSON counters from the C counters (and the beam search's stats)."""
        return {k: int(getattr(c, k)) for k in COUNTERS}

    def translate(self, line: str, where: str = "<input>") -> Translation:
        text = check_sentence(line, where)
        out = ffi.new("sb_pb_result **")
        c = ffi.new("sb_pb_counters *")
        st = ffi.new("sb_pb_beam_stats *")
        t0 = time.perf_counter()
        check(self.decode(text, out, c, st), f"{where}: decoding")
        seconds = time.perf_counter() - t0
        res = ffi.gc(out[0], lib.sb_pb_result_free)
        return Translation(entries(res), self.counters(c, st), seconds)


def _g(x: float) -> str:
    return format(x, ".6g")


def nbest_line(model: PhraseModel, sid: int, e: Entry, segmentation: bool = False) -> str:
    """Moses2's n-best format (ini order), with UnknownWordPenalty0 printed too."""
    parts = []
    for name, values in model.to_ini_order(e.features):
        parts.append(f"{name}= " + " ".join(_g(v) for v in values))
    text = e.segmentation if segmentation else e.text
    return f"{sid} ||| {text} ||| {' '.join(parts)} ||| {_g(e.total)}"


@dataclass
class RunSummary:
    sentences: int = 0
    words: int = 0
    seconds: float = 0.0          # decoding only (model loading excluded)
    counters: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        wps = self.words / self.seconds if self.seconds > 0 else 0.0
        return {"sentences": self.sentences, "source_words": self.words, "decode_seconds": round(self.seconds, 6),
                "words_per_second": round(wps, 3), **self.counters}


def run(decoder, lines: Iterable[str], out: IO[str], *, name: str = "<input>", scores: IO[str] | None = None,
        nbest: IO[str] | None = None, segmentation: bool = False, progress=None, nbest_segmentation: bool = False) -> RunSummary:
    """Decode every line; write the 1-best (input order; empty line -> empty line)."""
    summary = RunSummary()
    many = getattr(decoder, "translate_many", None)
    t0 = time.perf_counter()
    stream = (many(lines, name) if many is not None else
              ((line, decoder.translate(line, f"{name}:{lineno}")) for lineno, line in enumerate(lines, 1)))
    for lineno, (line, tr) in enumerate(stream, 1):
        summary.sentences += 1
        summary.words += len(input_words(line))
        summary.seconds += tr.seconds if many is None else 0.0
        for k, v in tr.counters.items():
            summary.counters[k] = summary.counters.get(k, 0) + v
        best = tr.best
        out.write(((best.segmentation if segmentation else best.text) if best else "") + "\n")
        if scores is not None:
            scores.write((f"{best.total:.6f}" if best else "0") + "\n")
        if nbest is not None and best is not None:
            for e in tr.entries:
                nbest.write(nbest_line(decoder.model, lineno - 1, e, nbest_segmentation) + "\n")
        if progress is not None:
            progress.update(1)
    if many is not None:  # threads: the wall time of the stream (writing included), not the sum of the sentences'
        summary.seconds = time.perf_counter() - t0
    return summary
