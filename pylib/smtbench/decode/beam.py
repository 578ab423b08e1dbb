"""Pharaoh's beam search and Moore & Quirk's (2007) distortion-penalty estimation (DE) and early pruning (EP)
over a :class:`~smtbench.decode.model.PhraseModel` (csrc/pb/beam.c; see its header for the algorithms).

Thresholds are differences of weighted natural-log model scores after one fixed weight normalisation:
the weights are read as if scaled so that the sum of their absolute values, UnknownWordPenalty's excepted, is 1
(``sum-abs``; the model itself is not rescaled, so the printed scores stay Moses' scores: a threshold T is
applied as T x that sum). ``none`` applies the thresholds to the model's scores as they are. This is unlike
``decode normal``'s ``-b``, Moses' probability ratio.
"""
from __future__ import annotations

import math

from ..native import check, ffi, lib
from .model import PhraseModel
from .search import Search

VARIANTS = {"pharaoh": int(lib.SB_PB_BEAM_PHARAOH), "de": int(lib.SB_PB_BEAM_DE), "de+ep": int(lib.SB_PB_BEAM_DE_EP)}
MODES = {"paper": int(lib.SB_PB_BEAM_MODE_PAPER), "moses": int(lib.SB_PB_BEAM_MODE_MOSES)}
NORMALIZATIONS = ("sum-abs", "none")
STATS = ("spans", "options", "ep_start_stops", "ep_end_stops", "ep_option_stops", "ep_options_cut",
         "limit_refused", "failed")


def weight_norm(model: PhraseModel, normalization: str = "sum-abs") -> float:
    """The factor thresholds are multiplied by: sum |w| over every weight but UnknownWordPenalty's (sum-abs)."""
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"weight normalisation {normalization!r}: one of {', '.join(NORMALIZATIONS)}")
    if normalization == "none":
        return 1.0
    norm = sum(abs(w) for w in model.internal_weights()[1:])
    if not norm > 0:
        raise ValueError(f"{model.config.path}: every weight is 0: cannot normalise the weights")
    return norm


def _threshold(name: str, value: float) -> float:
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name} {value}: must be >= 0 (a score difference; inf = no pruning)")
    return value


def _limit(name: str, value: int) -> int:
    if not 1 <= value <= 1_000_000:
        raise ValueError(f"{name} {value}: must be in 1..1000000")
    return value


class BeamDecoder(Search):
    """One variant x mode at fixed pruning settings. Thresholds in normalised units (module doc)."""

    kind = int(lib.SB_PB_SEARCH_BEAM)

    def __init__(self, model: PhraseModel, variant: str = "de+ep", mode: str = "paper",
                 beam_threshold: float = 1.0, beam_limit: int = 10, ttable_threshold: float = 1.5,
                 ttable_limit: int = 20, ep_threshold: float | None = None, distortion_limit: int | None = None,
                 nbest: int = 0, normalization: str = "sum-abs"):
        if variant not in VARIANTS:
            raise ValueError(f"--variant {variant!r}: one of {', '.join(VARIANTS)}")
        if mode not in MODES:
            raise ValueError(f"--mode {mode!r}: one of {', '.join(MODES)}")
        _threshold("--beam-threshold", beam_threshold)
        _threshold("--ttable-threshold", ttable_threshold)
        _limit("--beam-limit", beam_limit)
        _limit("--ttable-limit", ttable_limit)
        if ep_threshold is not None and variant != "de+ep":
            raise ValueError(f"--ep-threshold is early pruning's: it applies to --variant de+ep only, not {variant}")
        ep = ttable_threshold if ep_threshold is None else _threshold("--ep-threshold", ep_threshold)
        tm = model.config.feature("PhraseDictionaryMemory")
        if tm.table_limit and ttable_limit > tm.table_limit:
            raise ValueError(f"--ttable-limit {ttable_limit}: {model.config.path} loads at most table-limit="
                             f"{tm.table_limit} translations per source phrase (raise table-limit in the ini)")
        if nbest < 0 or nbest > 100_000:
            raise ValueError(f"--n-best size {nbest}: must be in 0..100000")
        dl = model.config.distortion_limit if distortion_limit is None else distortion_limit
        if dl > int(lib.SB_PB_MAX_WORDS):
            raise ValueError(f"--distortion-limit {dl}: must be < {int(lib.SB_PB_MAX_WORDS)} (negative = none)")
        self.model = model
        self.variant, self.mode, self.normalization = variant, mode, normalization
        self.norm = weight_norm(model, normalization)
        self.settings = {"variant": variant, "mode": mode, "beam_threshold": beam_threshold,
                         "beam_limit": beam_limit, "ttable_threshold": ttable_threshold,
                         "ttable_limit": ttable_limit, "ep_threshold": ep if variant == "de+ep" else None,
                         "distortion_limit": dl, "weight_normalization": normalization,
                         "weight_norm": self.norm}
        o = ffi.new("sb_pb_beam_opts *")
        o.variant, o.mode = VARIANTS[variant], MODES[mode]
        o.beam_threshold = beam_threshold * self.norm
        o.beam_limit = beam_limit
        o.ttable_threshold = ttable_threshold * self.norm
        o.ttable_limit = ttable_limit
        o.ep_threshold = ep * self.norm
        o.distortion_limit = dl
        o.nbest = nbest
        self.opts = o

    def decode(self, text: bytes, out, counters, stats, ws=ffi.NULL) -> int:
        return lib.sb_pb_decode_beam(self.model._m, text, len(text), self.opts, ws, out, counters, stats)

    def counters(self, c, st) -> dict[str, int]:
        counters = {"hypotheses_evaluated": int(c.created)}
        counters.update({k: int(getattr(c, k)) for k in ("recombined", "beam_discarded", "pruned", "expanded")})
        counters.update({k: int(getattr(st, k)) for k in STATS})
        return counters


def distortion_totals(n: int, spans: list[tuple[int, int]]) -> tuple[int, int]:
    """(Pharaoh's distortion with the final jump, the sum of DE's increments) of a segmentation given as source
    spans in target order, computed by the C search's own functions."""
    k = len(spans)
    starts = ffi.new("int[]", [a for a, _ in spans] or [0])
    ends = ffi.new("int[]", [b for _, b in spans] or [0])
    p, d = ffi.new("int *"), ffi.new("int *")
    check(lib.sb_pb_beam_distortion_totals(n, starts, ends, k, p, d), f"segmentation {spans} of {n} words")
    return int(p[0]), int(d[0])
