"""Scorer backends for `smtbench lm ppl` / `smtbench bench mokry_lm`: a registry name -> factory.

A factory takes an :class:`~smtbench.lm.arpa.ArpaModel` (plus keyword options, e.g.
``queue_size``) and returns a :class:`Scorer`, whose ``score_stream(tokens)`` scores a token
stream (see :func:`encode_lines`) and returns one log10 probability and one matched n-gram length
per query, KenLM ``FullScore`` semantics. Other modules add backends with :func:`register`
(e.g. ``register("btree", factory)`` in smtbench.lm.btree); the commands look names up here and
import :data:`PLUGINS` first so that their registrations run.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

import numpy as np

from .arpa import ArpaModel
from ..ioutil import words as split_words

#: A sentence starts with this bit OR'ed onto the id of ``<s>`` (the context; not scored).
SENTENCE_MARK = 1 << 31

#: Modules imported (if present) before a backend is looked up, so they can register theirs.
PLUGINS = ["smtbench.lm.probing", "smtbench.lm.btree"]  # btree.py registers btree-cuda too


@dataclass
class StreamScores:
    logprob: np.ndarray   # (queries,) float32 log10 p, in query order
    length: np.ndarray    # (queries,) uint8 matched n-gram length
    log10_sum: float      # sum of logprob in query order (double)
    elapsed_ns: int       # time of the scoring loop (ids already prepared)


class Scorer(Protocol):
    name: str

    @property
    def nbytes(self) -> int: ...

    def score_stream(self, tokens: np.ndarray) -> StreamScores: ...


Factory = Callable[..., Scorer]
BACKENDS: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    BACKENDS[name] = factory


def _load_plugins() -> None:
    for mod in PLUGINS:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


def names() -> list[str]:
    _load_plugins()
    return sorted(BACKENDS)


def make(name: str, model: ArpaModel, **options: Any) -> Scorer:
    """Build backend ``name`` over ``model``; ValueError naming the known backends otherwise."""
    _load_plugins()
    if name not in BACKENDS:
        raise ValueError(f"unknown LM backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    return BACKENDS[name](model, **options)


@dataclass
class EncodedText:
    tokens: np.ndarray     # uint32 stream: MARK|<s>, ids..., </s>, MARK|<s>, ...
    oov: np.ndarray        # (queries,) bool: the query's word is not in the vocabulary
    sentences: int

    @property
    def queries(self) -> int:
        return int(self.oov.shape[0])


def specials(model: ArpaModel) -> tuple[int, int, int]:
    """(<s>, </s>, <unk>) ids; ValueError if the model lacks <s> or </s> (KenLM refuses too)."""
    for w in ("<s>", "</s>"):
        if w not in model.word_id:
            raise ValueError(f"the model has no {w} unigram (KenLM refuses such models too)")
    return model.word_id["<s>"], model.word_id["</s>"], model.word_id["<unk>"]


def read_document(model: ArpaModel, text: str, max_lines: int = 0,
                  min_queries: int = 0) -> tuple[list[str], EncodedText, int]:
    """A benchmark's test document: the lines of ``text`` (the first ``max_lines``, 0 = all), encoded with the
    model's vocabulary, and how many times to tile them for at least ``min_queries`` queries (at least once)."""
    import math

    from ..ioutil import open_text

    with open_text(text) as fh:
        lines = [line.rstrip("\n") for line in fh]
    if max_lines:
        lines = lines[:max_lines]
    if not lines:
        raise ValueError(f"{text}: no lines to score")
    enc = encode_lines(model, lines)
    reps = max(1, math.ceil(min_queries / enc.queries)) if min_queries else 1
    return lines, enc, reps


def encode_lines(model: ArpaModel, lines: Iterable[str]) -> EncodedText:
    """Whitespace-split each line (an empty line is a sentence of just ``</s>``); OOV words map to
    ``<unk>``. Each line becomes MARK|<s>, its word ids, </s>."""
    bos, eos, unk = specials(model)
    get = model.word_id.get
    toks: list[int] = []
    oov: list[bool] = []
    mark = SENTENCE_MARK | bos
    n = 0
    for line in lines:
        words = split_words(line)
        toks.append(mark)
        ids = [get(w, -1) for w in words]
        oov.extend(i < 0 for i in ids)
        toks.extend(unk if i < 0 else i for i in ids)
        toks.append(eos)
        oov.append(False)
        n += 1
    return EncodedText(np.asarray(toks, dtype=np.uint32), np.asarray(oov, dtype=bool), n)


def perplexity_summary(scores: StreamScores, text: EncodedText) -> dict[str, Any]:
    """KenLM ``query``'s corpus summary: tokens = words + </s> (not <s>); OOVs excluded only
    from the second perplexity (their own scores only)."""
    tokens = text.queries
    oovs = int(text.oov.sum())
    total = float(scores.log10_sum)
    oov_sum = float(scores.logprob[text.oov].astype(np.float64).sum()) if oovs else 0.0
    ppl = 10.0 ** (-total / tokens) if tokens else float("nan")
    ppl_ex = 10.0 ** (-(total - oov_sum) / (tokens - oovs)) if tokens > oovs else float("nan")
    return {"perplexity": ppl, "perplexity_excluding_oovs": ppl_ex, "log10_sum": total,
            "tokens": tokens, "oovs": oovs, "sentences": text.sentences}
