"""Moses2's cube pruning (csrc/pb/cube.c): ministacks by (coverage, last end), one queue per stack, pop limit."""
from __future__ import annotations

from ..native import ffi, lib
from .model import PhraseModel
from .search import Search, common_opts


#: --lm-pipeline: off = Moses2 (items scored in full when created); lazy = items ordered without the LM of their
#: first words, LM added synchronously when popped; queue = Mokry's pipeline-tolerant decoder (the popped
#: hypotheses' LM through the automaton queue, drained before the next stack); queue-exact = the thesis' future
#: work (items through the automaton queue before they enter the item queue: exact scores, pops in rounds of
#: queue_size; queue size 1 = Moses2's pop order)
LM_PIPELINES = {"off": 0, "lazy": 1, "queue": 2, "queue-exact": 3}


#: --stacks: the unit -s prunes (the Moses2 paper's stack configurations); Moses2 = coverage-end
STACKS = {"coverage-end": int(lib.SB_PB_STACKS_COVERAGE_END), "coverage": int(lib.SB_PB_STACKS_COVERAGE),
          "cardinality": int(lib.SB_PB_STACKS_CARDINALITY)}


#: --queues: one item queue per stack (Moses2), or per destination coverage (and end), each popped up to the limit
QUEUES = {"cardinality": int(lib.SB_PB_QUEUES_CARDINALITY), "coverage": int(lib.SB_PB_QUEUES_COVERAGE),
          "coverage-end": int(lib.SB_PB_QUEUES_COVERAGE_END)}


class CubeDecoder(Search):
    """``-search-algorithm 1``: ``pop_limit`` = -cube-pruning-pop-limit, ``stack_size`` = -s (per ministack)."""

    kind = int(lib.SB_PB_SEARCH_CUBE)

    def __init__(self, model: PhraseModel, pop_limit: int = 1000, stack_size: int = 200, beam_threshold: float = 1e-5,
                 distortion_limit: int | None = None, nbest: int = 0, recombine_forward: bool = False,
                 lm_pipeline: str = "off", queue_size: int = 8, stacks: str = "coverage-end",
                 queues: str = "cardinality"):
        if not 1 <= pop_limit <= 10_000_000:
            raise ValueError(f"--pop-limit {pop_limit}: must be in 1..10000000")
        self.model = model
        self.opts = ffi.new("sb_pb_cube_opts *")
        self.opts.pop_limit = pop_limit
        common_opts(self.opts, model, stack_size, beam_threshold, distortion_limit, nbest, recombine_forward)
        if lm_pipeline not in LM_PIPELINES:
            raise ValueError(f"--lm-pipeline {lm_pipeline!r}: one of {', '.join(LM_PIPELINES)}")
        if not 0 <= queue_size <= int(lib.SB_LM_MAX_QUEUE):
            raise ValueError(f"--queue-size {queue_size}: must be in 0..{int(lib.SB_LM_MAX_QUEUE)}")
        if stacks not in STACKS:
            raise ValueError(f"--stacks {stacks!r}: one of {', '.join(STACKS)}")
        self.opts.stacks = STACKS[stacks]
        if queues not in QUEUES:
            raise ValueError(f"--queues {queues!r}: one of {', '.join(QUEUES)}")
        if stacks == "cardinality" and queues != "cardinality":
            raise ValueError(f"--queues {queues} needs edges of one coverage: not with --stacks cardinality")
        self.opts.queues = QUEUES[queues]
        self.opts.lm_mode = LM_PIPELINES[lm_pipeline]
        self.opts.queue_size = queue_size

    def decode(self, text: bytes, out, counters, stats, ws=ffi.NULL) -> int:
        return lib.sb_pb_decode_cube(self.model._m, text, len(text), self.opts, ws, out, counters)
