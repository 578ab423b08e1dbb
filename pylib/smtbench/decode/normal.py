"""Moses' normal stack search (csrc/pb/normal.c) over a :class:`~smtbench.decode.model.PhraseModel`."""
from __future__ import annotations

from ..native import ffi, lib
from .model import PhraseModel
from .search import Search, common_opts, nbest_line  # noqa: F401  (nbest_line: bench_decode.py imports it here)


class NormalDecoder(Search):
    """``-search-algorithm 0``. ``beam_threshold`` is Moses' ratio (1e-5 = ln −11.51; 0 = no beam)."""

    kind = int(lib.SB_PB_SEARCH_NORMAL)

    def __init__(self, model: PhraseModel, stack_size: int = 200, beam_threshold: float = 1e-5,
                 distortion_limit: int | None = None, nbest: int = 0, recombine_forward: bool = False):
        self.model = model
        self.opts = ffi.new("sb_pb_normal_opts *")
        common_opts(self.opts, model, stack_size, beam_threshold, distortion_limit, nbest, recombine_forward)

    def decode(self, text: bytes, out, counters, stats, ws=ffi.NULL) -> int:
        return lib.sb_pb_decode_normal(self.model._m, text, len(text), self.opts, ws, out, counters)
