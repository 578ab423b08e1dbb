"""`smtbench bench moses2_search` (old name: `bench cube-configs`): the Moses2 paper's search experiments (Table 4 /
Fig 6: stack configurations against the pop limit; Table 5: queue configurations at one pop limit): every point
decoded on one model in one process, the timed passes interleaved (alternating direction), quality and search errors
measured once per point outside the timing."""
from __future__ import annotations

import argparse
import hashlib
import statistics
from dataclasses import dataclass
from typing import Callable

from ..ioutil import words as split_words
from ..decode.compare import bleu
from ..decode.cube import CubeDecoder
from ..decode.model import PhraseModel
from ..decode.reference import Reference, search_errors
from .harness import Protocol, Ratio, must_agree

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `moses2_search` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("moses2_search", ("cube-configs",),
         help="cube pruning stack/queue configurations x pop limits, search errors "
              "(the Moses2 paper's Tables 4-5, Fig 6)",
         description="Decodes the first --sentences lines at every point, --repeats interleaved timed passes "
                     "(model loading excluded), and counts search errors on every line of at most --short-words "
                     "source words against a near-exact reference (normal search, no beam, exact "
                     "recombination, stack sizes --reference-widths; confirmed when the two widest agree, "
                     "exact when the widest pruned nothing).",
         settings=(
             arg("-f", "--config", required=True, help="moses.ini"),
             arg("--input", required=True),
             arg("--reference", required=True, help="reference translations (BLEU)"),
             arg("--pop-limits", default="100,500,1000,5000", config=True, grid=True, help="Table 4's pop limits"),
             arg("--stacks", default="cardinality,coverage,coverage-end"),
             arg("--queues", default="cardinality,coverage,coverage-end"),
             arg("--queue-pop-limit", type=int, default=400, config=True, help="Table 5's pop limit"),
             arg("-s", "--stack-size", type=int, default=0, help="-s (0 = the point's pop limit)"),
             arg("--sentences", type=int, default=0, config=True, help="first N lines (0 = all)"),
             arg("--short-words", type=int, default=12, config=True,
                 help="search errors on lines of at most this many words"),
             arg("--reference-widths", default="1000,5000", config=True, grid=True,
                 help="stack sizes of the reference search"),
             protocol(repeats=1),
             arg("--out", required=True),
             arg("--progress", action="store_true"),
             key("model", "trained", help="trained: the workflow's own model, test books; oracle: the Moses "
                                          "oracle's model, dev books"),
             key("weights", [], grid=True, help="extra runs under these weights (common.smk: weight_runs)"),
         )),
)


@dataclass(frozen=True)
class Point:
    table: str        # "stacks" (Table 4 / Fig 6) or "queues" (Table 5)
    stacks: str
    queues: str
    pop_limit: int


def points(pop_limits: list[int], stacks: list[str], queue_pop_limit: int, queues: list[str]) -> list[Point]:
    """Table 4's grid (Moses2's item queue per cardinality) and Table 5's row (Moses2's ministacks)."""
    pts = [Point("stacks", s, "cardinality", p) for p in pop_limits for s in stacks]
    pts += [Point("queues", "coverage-end", q, queue_pop_limit) for q in queues]
    return pts


def sweep(model: PhraseModel, src: list[str], refs: list[str], short: list[str], short_refs: list[Reference],
          pts: list[Point], repeats: "int | Protocol", stack_size: int, emit: Callable[..., object],
          progress: object = None, writer: object = None) -> None:
    """One row per point and repeat: decode time of ``src`` (loading excluded), words/s, mean model score, BLEU,
    hypotheses created, and the search errors on ``short`` against ``short_refs``. Repeats: smtbench.protocol
    (``repeats`` a count or a Protocol; ``writer`` the RowWriter behind ``emit``)."""
    words = sum(len(split_words(s)) for s in src)
    decs = {p: CubeDecoder(model, pop_limit=p.pop_limit, stack_size=stack_size or p.pop_limit, stacks=p.stacks,
                           queues=p.queues) for p in pts}
    quality: dict[Point, dict] = {}
    for p, dec in decs.items():  # untimed: search errors on the short sentences
        scores = [dec.translate(x, f"<short>:{i + 1}").best.total for i, x in enumerate(short)]
        quality[p] = search_errors(scores, short_refs) if short else {}
    first: dict[Point, list] = {}

    def time_point(rep: int, p: Point) -> float:
        secs, texts, scores, created = 0.0, [], [], 0
        for i, line in enumerate(src):
            tr = decs[p].translate(line, f"<input>:{i + 1}")
            secs += tr.seconds
            created += tr.counters["created"]
            texts.append(tr.best.text if tr.best else "")
            scores.append(tr.best.total if tr.best else 0.0)
        if p not in first:
            first[p] = list(zip(texts, scores))
            quality[p].update(bleu=round(bleu(texts, refs), 2), mean_score=round(statistics.fmean(scores), 6),
                              output_sha=hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16],
                              created_per_word=round(created / words, 2) if words else None)
        else:
            must_agree(first[p] == list(zip(texts, scores)), f"{p}: repeat {rep} gave other outputs than repeat 0")
        emit(table=p.table, stacks=p.stacks, queues=p.queues, pop_limit=p.pop_limit,
             stack_size=stack_size or p.pop_limit, repeat=rep, sentences=len(src), source_words=words,
             decode_seconds=round(secs, 6), words_per_second=round(words / secs, 3) if secs else None,
             **quality[p])
        return secs * 1e9

    # every point once per repeat (smtbench.protocol); headline: the first two points' speed ratio
    proto = repeats if isinstance(repeats, Protocol) else Protocol(repeats=repeats)
    key = {p: f"{p.table}/{p.stacks}/{p.queues}/{p.pop_limit}" for p in pts}
    ratios = [Ratio.speedup("first_vs_second", key[pts[0]], key[pts[1]])] if len(pts) > 1 else []
    Sweep("moses2_search", proto, writer, ratios=ratios, progress=progress).points(
        pts, time_point, key=key.__getitem__).run()


def main(args: argparse.Namespace) -> int:
    """`bench moses2_search` (options: VERBS above)."""
    from ..benchutil import model_path, parse_int_list, require_range
    from ..decode.compare import read_lines
    from ..decode.cube import QUEUES, STACKS
    from ..decode.model import PhraseModel
    from ..decode.reference import near_exact
    from .harness import progress, rows as open_rows

    protocol = Protocol.from_args(args)
    require_range("--sentences", args.sentences, 0, 10**7)
    require_range("--short-words", args.short_words, 0, 100)
    require_range("--queue-pop-limit", args.queue_pop_limit, 1, 10**7)
    require_range("--stack-size", args.stack_size, 0, 10**6)
    pops = parse_int_list(args.pop_limits, 1, 10**7, "--pop-limits")
    widths = tuple(parse_int_list(args.reference_widths, 1, 10**6, "--reference-widths"))
    stacks = [s for s in args.stacks.split(",") if s]
    queues = [q for q in args.queues.split(",") if q]
    for name, got, known in (("--stacks", stacks, STACKS), ("--queues", queues, QUEUES)):
        bad = [x for x in got if x not in known]
        if bad:
            raise ValueError(f"{name}: unknown {', '.join(bad)} (one of {', '.join(known)})")
    src, refs = read_lines(args.input), read_lines(args.reference)
    if len(src) != len(refs):
        raise ValueError(f"{args.input}: {len(src)} lines, but {args.reference} has {len(refs)}")
    n = args.sentences or len(src)
    short = [x for x in src if 0 < len(split_words(x)) <= args.short_words]
    model = PhraseModel(args.config)
    pts = points(pops, stacks, args.queue_pop_limit, queues)
    refs_short = near_exact(model, short, widths) if short else []
    fixed = {"model": model_path(args.config), "input": model_path(args.input)}
    with open_rows("moses2_search", args.out, fixed) as rows, progress(len(pts) * args.repeats, args.progress) as bar:
        sweep(model, src[:n], refs[:n], short, refs_short, pts, protocol, args.stack_size,
              lambda **r: rows.emit(reference_widths=",".join(map(str, widths)),
                                    reference_seconds=round(sum(x.seconds for x in refs_short), 3), **r),
              bar, rows)
    return 0
