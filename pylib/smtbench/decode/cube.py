"""Moses2's cube pruning (csrc/pbcube.c): ministacks by (coverage, last end), one queue per stack, pop limit."""
from __future__ import annotations

import math
import time

from ..native import check, ffi, lib
from .model import PhraseModel
from .normal import MAX_WORDS, Translation, _entries, check_sentence


#: --lm-pipeline: off = Moses2 (items scored in full when created); lazy = items ordered without the LM of their
#: first words, LM added synchronously when popped; queue = Mokry's pipeline-tolerant decoder (the popped
#: hypotheses' LM through the automaton queue, drained before the next stack)
LM_PIPELINES = {"off": 0, "lazy": 1, "queue": 2}


#: --stacks: the unit -s prunes (the Moses2 paper's stack configurations); Moses2 = coverage-end
STACKS = {"coverage-end": int(lib.SB_PB_STACKS_COVERAGE_END), "coverage": int(lib.SB_PB_STACKS_COVERAGE),
          "cardinality": int(lib.SB_PB_STACKS_CARDINALITY)}


#: --queues: one item queue per stack (Moses2), or per destination coverage (and end), each popped up to the limit
QUEUES = {"cardinality": int(lib.SB_PB_QUEUES_CARDINALITY), "coverage": int(lib.SB_PB_QUEUES_COVERAGE),
          "coverage-end": int(lib.SB_PB_QUEUES_COVERAGE_END)}


class CubeDecoder:
    """``-search-algorithm 1``: ``pop_limit`` = -cube-pruning-pop-limit, ``stack_size`` = -s (per ministack)."""

    def __init__(self, model: PhraseModel, pop_limit: int = 1000, stack_size: int = 200, beam_threshold: float = 1e-5,
                 distortion_limit: int | None = None, nbest: int = 0, recombine_forward: bool = False,
                 lm_pipeline: str = "off", queue_size: int = 8, stacks: str = "coverage-end",
                 queues: str = "cardinality"):
        if not 1 <= pop_limit <= 10_000_000:
            raise ValueError(f"--pop-limit {pop_limit}: must be in 1..10000000")
        if not 1 <= stack_size <= 1_000_000:
            raise ValueError(f"--stack-size {stack_size}: must be in 1..1000000")
        if not 0 <= beam_threshold <= 1:
            raise ValueError(f"--beam-threshold {beam_threshold}: must be in [0, 1] (a probability ratio)")
        if nbest < 0 or nbest > 100_000:
            raise ValueError(f"--n-best size {nbest}: must be in 0..100000")
        dl = model.config.distortion_limit if distortion_limit is None else distortion_limit
        if dl > MAX_WORDS:
            raise ValueError(f"--distortion-limit {dl}: must be < {MAX_WORDS} (negative = none)")
        self.model = model
        self.opts = ffi.new("sb_pb_cube_opts *")
        self.opts.pop_limit = pop_limit
        self.opts.stack_size = stack_size
        self.opts.beam_width = math.log(beam_threshold) if beam_threshold > 0 else -math.inf
        self.opts.distortion_limit = dl
        self.opts.nbest = nbest
        self.opts.recombine_forward = int(recombine_forward)
        if lm_pipeline not in LM_PIPELINES:
            raise ValueError(f"--lm-pipeline {lm_pipeline!r}: one of {', '.join(LM_PIPELINES)}")
        if not 0 <= queue_size <= int(lib.SB_LM_MAX_QUEUE):
            raise ValueError(f"--queue-size {queue_size}: must be in 0..{int(lib.SB_LM_MAX_QUEUE)}")
        if stacks not in STACKS:
            raise ValueError(f"--stacks {stacks!r}: one of {', '.join(STACKS)}")
        self.opts.stacks = STACKS[stacks]
        if queues not in QUEUES:
            raise ValueError(f"--queues {queues!r}: one of {', '.join(QUEUES)}")
        self.opts.queues = QUEUES[queues]
        self.opts.lm_mode = LM_PIPELINES[lm_pipeline]
        self.opts.queue_size = queue_size

    def translate(self, line: str, where: str = "<input>") -> Translation:
        text = check_sentence(line, where)
        out = ffi.new("sb_pb_result **")
        c = ffi.new("sb_pb_counters *")
        t0 = time.perf_counter()
        check(lib.sb_pb_decode_cube(self.model._m, text, len(text), self.opts, out, c), f"{where}: decoding")
        seconds = time.perf_counter() - t0
        res = ffi.gc(out[0], lib.sb_pb_result_free)
        counters = {k: int(getattr(c, k)) for k in ("created", "recombined", "beam_discarded", "pruned", "expanded")}
        return Translation(_entries(res), counters, seconds)
