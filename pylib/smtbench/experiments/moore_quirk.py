"""`smtbench bench moore_quirk` (old name: `bench beam`): Moore & Quirk (2007) section 6, Figs 2-3: the
pruning-parameter search of the three decoders (Pharaoh, DE, DE+EP).

A setting is the paper's vector (t-table threshold, beam threshold, t-table limit, beam limit); the early-pruning
threshold is the t-table threshold (as in the paper). Settings are chosen either by the full grid (``paper``
profile) or, as the paper did, by hill-climbing from a generous setting: from the current setting, every
neighbour one grid step tighter in one parameter is decoded, and the walk moves to the neighbour with the highest
BLEU (ties: fewer hypotheses evaluated) until every parameter is at its tightest. The choice uses only
deterministic measures (BLEU, hypotheses evaluated), never the timings; every setting decoded is a point of the
figures. Timing: the exploration pass is repeat 0 (each point decoded once, in exploration order); repeats 1.. decode
every point again, in alternating order (interleaved), and every repeat must give the same outputs.

``peers`` (the second configuration, Moses mode on a Moses model): our other searches decoded in the same
interleaved passes, ``normal:S`` (Moses' normal stack search, -s S) and ``cube:P`` (cube pruning, pop limit P,
-s P); their rows have variant ``normal`` / ``cube``, the stack size or pop limit as beam_limit and thresholds -1
(Moses' default beam, 1e-5), and hypotheses_evaluated = their `created` counter.

``cross``: after the walks, Pharaoh is also decoded at every setting DE visited and DE at every setting DE+EP
visited, so that the paper's same-settings comparisons (end of section 6: where each saving comes from) have
pairs to compare.

``live_peers`` (Moses mode, issue 40): Moses' own programs (config/peers.yaml entries serving moore_quirk) decode the
same model live, 1 thread, no n-best, each timed as a process with loading subtracted alike
(harness.loading_subtracted: the whole input minus its first line, as ``bench moses_decode`` times them), as points of
the same repeat loop as ours (same run_id, interleaved): ``moses2`` at every ``peers`` setting (m2-normalS,
m2-cubeP), ``moses`` (Moses v1) at every normal:S of ``peers``, plain (m1-normalS) and with
``-early-distortion-cost`` (m1-normalS-edc: the DE of DE+EP), on the first ``moses1_sentences`` verses only (Moses v1
takes 4-7 minutes a pass on the 1,037 dev verses). Their 1-bests are checked against our search of the same setting
(decode.compare.peer_identity: Moses2 strict, Moses v1 counted). With ``moses1_sentences``, every row of ours also
carries ``head_*`` fields: its time and BLEU on those verses (time: verses 2..N, the ones Moses' timing covers), from
the same passes, so DE+EP's hull can be read on Moses v1's verses.
"""
from __future__ import annotations

import argparse
import hashlib
import statistics
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Iterable

from ..ioutil import words as split_words
from ..decode.beam import BeamDecoder
from ..decode.compare import bleu
from ..decode.model import PhraseModel
from .harness import Protocol, must_agree

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `moore_quirk` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("moore_quirk", ("beam",),
         help="Pharaoh / DE / DE+EP pruning-parameter sweep: BLEU, ms/word, hypotheses/word "
              "(Moore & Quirk 2007, Figs 2-3)",
         description="Decodes the first --sentences lines at every setting (t-table threshold, beam threshold, "
                     "t-table limit, beam limit; early-pruning threshold = t-table threshold) chosen by --search: "
                     "'hill-climb' (the paper's: from the most generous setting, move to the one-step-tighter "
                     "neighbour of highest BLEU, ties to fewer hypotheses, until the tightest; chosen on BLEU and "
                     "hypotheses only) or 'grid' (every combination). Repeat 0 is the exploration pass, repeats "
                     "1.. decode every point again in alternating order; outputs must not change. Thresholds are "
                     "in sum-abs-normalised natural-log score units (see `smtbench decode beam --help`).",
         settings=(
             arg("-f", "--config", required=True, help="moses.ini"),
             arg("--input", required=True),
             arg("--reference", required=True, help="reference translations (BLEU)"),
             arg("--variants", default="pharaoh,de,de+ep"),
             arg("--mode", choices=["paper", "moses"], default="paper"),
             arg("--search", choices=["hill-climb", "grid"], default="hill-climb", config=True),
             arg("--thresholds", default="0.5,1,1.5,2,2.5", config=True, grid=True,
                 help="t-table and beam thresholds (the paper's)"),
             arg("--limits", default=None, config=True, grid=True,
                 help="t-table and beam limits (default: the paper's 5,10,15,20,25, those above the model's "
                      "table-limit left out: Moses' 20 when the ini sets none, as `tm model` writes it)"),
             arg("--pharaoh-beam-limits", default="30,35,40,45,50,60,75,100",
                 help="further beam limits for the pharaoh baseline (the paper's)", config=True, grid=True),
             arg("--peers", default="",
                 help="our other searches in the same passes (Moses mode comparisons): normal:S (normal stack "
                      "search -s S), cube:P (cube pruning, pop limit P, -s P), comma-separated"),
             arg("--live-peers", default="",
                 help="Moses' programs timed live beside ours in the same passes (Moses mode; entries of "
                      "config/peers.yaml serving moore_quirk): moses2 at every --peers setting, moses (Moses v1) at "
                      "every normal:S of --peers, plain and with -early-distortion-cost; 1 thread, no n-best, loading "
                      "subtracted (the whole input minus its first line); comma-separated"),
             arg("--moses1-sentences", type=int, default=200,
                 help="Moses v1 decodes only the first N of the verses (0 = all of them; it takes 4-7 minutes a "
                      "pass on the 1,037 dev verses); ours' rows then also record their time and BLEU on them"),
             arg("--no-cross", action="store_true",
                 help="do not decode pharaoh at de's settings and de at de+ep's (the same-settings comparisons)"),
             arg("--extra-beam-limits", default="",
                 help="further beam limits for every variant (e.g. beyond a model's table-limit, which caps --limits)"),
             arg("--distortion-limit", type=int, default=None, help="default: the ini's", config=True),
             arg("--every", type=int, default=1, config=True,
                 help="take every K-th line (1, 1+K, ...: a subset spread over every book), before --sentences"),
             arg("--sentences", type=int, default=0, help="first N lines (0 = all)", config=True),
             protocol(repeats=2),  # repeat 0 = the exploration pass
             arg("--out", required=True),
             arg("--progress", action="store_true"),
             key("lm", help="a name in lm_models (the paper: a trigram)"),
             key("model", "trained",
                 help="trained: the workflow's own model, test books; oracle: the Moses oracle's model, dev books"),
             key("weights", [], grid=True, help="extra runs under these weights (common.smk: weight_runs)"),
             key("moses", type=dict,
                 help="the second configuration: DE+EP in Moses mode on the oracle's model (dev verses) vs our other "
                      "searches (--peers)"),
         )),
)


@dataclass(frozen=True, order=True)
class Setting:
    variant: str
    ttable_threshold: float
    beam_threshold: float
    ttable_limit: int
    beam_limit: int

    def vector(self) -> str:
        if self.variant == "normal":
            return f"normal search -s {self.beam_limit}"
        if self.variant == "cube":
            return f"cube pruning, pop limit {self.beam_limit}, -s {self.beam_limit}"
        return f"({self.ttable_threshold:g}, {self.beam_threshold:g}, {self.ttable_limit}, {self.beam_limit})"


@dataclass
class Grid:
    thresholds: list[float]            # the paper: 0.5 .. 2.5
    limits: list[int]                  # the paper: 5 .. 25
    pharaoh_beam_limits: list[int]     # the baseline's beam limits (the paper adds 30 .. 100)
    extra_beam_limits: tuple[int, ...] = ()  # further beam limits for every variant (beyond the t-table limits)

    def axes(self, variant: str) -> list[list]:
        bl = set(self.limits) | set(self.extra_beam_limits)
        if variant == "pharaoh":
            bl |= set(self.pharaoh_beam_limits)
        return [sorted(self.thresholds), sorted(self.thresholds), sorted(self.limits), sorted(bl)]


def full_grid(variant: str, grid: Grid) -> list[Setting]:
    import itertools
    return [Setting(variant, *v) for v in itertools.product(*grid.axes(variant))]


def hill_climb(variant: str, grid: Grid, quality: Callable[[Setting], tuple[float, int]]) -> list[Setting]:
    """Settings decoded by the walk from the most generous setting, in the order they were decoded."""
    axes = grid.axes(variant)
    idx = [len(a) - 1 for a in axes]
    seen: list[Setting] = []

    def at(ix: list[int]) -> Setting:
        return Setting(variant, *(a[i] for a, i in zip(axes, ix)))

    def visit(s: Setting) -> tuple[float, int]:
        if s not in seen:
            seen.append(s)
        return quality(s)

    visit(at(idx))
    while any(idx):
        best = None
        for k in range(4):
            if idx[k] == 0:
                continue
            cand = list(idx)
            cand[k] -= 1
            b, hyps = visit(at(cand))
            key = (b, -hyps)
            if best is None or key > best[0]:
                best = (key, cand)
        idx = best[1]
    return seen


@dataclass
class Outcome:
    bleu: float
    hypotheses: int
    seconds: float
    sha: str
    mean_score: float
    counters: dict[str, int]
    outputs: list[str]
    scores: list[float] = field(default_factory=list)   # each sentence's model score (the identity rule)
    each: list[float] = field(default_factory=list)     # each sentence's decoding seconds (the head_* fields)


def decode_all(dec, src: list[str], refs: list[str]) -> Outcome:
    secs, texts, scores, counters, each = 0.0, [], [], {}, []
    for i, line in enumerate(src):
        tr = dec.translate(line, f"<input>:{i + 1}")
        secs += tr.seconds
        each.append(tr.seconds)
        texts.append(tr.best.text if tr.best else "")
        scores.append(tr.best.total if tr.best else 0.0)
        for k, v in tr.counters.items():
            counters[k] = counters.get(k, 0) + v
    hyps = counters["hypotheses_evaluated"] if "hypotheses_evaluated" in counters else counters.get("created", 0)
    return Outcome(bleu=round(bleu(texts, refs), 4), hypotheses=hyps, seconds=secs,
                   sha=hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16],
                   mean_score=round(statistics.fmean(scores), 6) if scores else 0.0, counters=counters,
                   outputs=texts, scores=scores, each=each)


def sweep(model: PhraseModel, src: list[str], refs: list[str], variants: Iterable[str], grid: Grid, search: str,
          mode: str, distortion_limit: int | None, repeats: "int | Protocol", emit: Callable[..., object],
          progress: Callable[[], None] = lambda: None, cross: bool = True, peers: Iterable[str] = (),
          writer: object = None, live: "Callable[[dict[str, Outcome]], list] | None" = None, head: int = 0) -> None:
    """One row per (setting, repeat). Repeat 0 is the exploration; repeats 1.. follow smtbench.protocol (``repeats``
    counts the exploration; a Protocol's repeats/max_repeats likewise; ``writer``: the RowWriter behind ``emit``).
    ``live``: given our ``peers`` searches' exploration outcomes (by their --peers spec), the live peers' timed points
    (smtbench.protocol.Task), added to the same repeat loop; ``head`` (0 < head < sentences): every row also records
    its time over verses 2..head and BLEU over the first ``head`` (the verses a live peer decoded only)."""
    variants = list(variants)
    words = sum(len(split_words(s)) for s in src)
    head = head if 0 < head < len(src) else 0
    head_words = sum(len(split_words(s)) for s in src[1:head]) if head else 0
    decoders: dict[Setting, object] = {}
    first: dict[Setting, Outcome] = {}
    order: list[Setting] = []

    def decoder(s: Setting):
        if s in decoders:
            return decoders[s]
        if s.variant == "normal":
            from ..decode.normal import NormalDecoder
            decoders[s] = NormalDecoder(model, stack_size=s.beam_limit, distortion_limit=distortion_limit)
        elif s.variant == "cube":
            from ..decode.cube import CubeDecoder
            decoders[s] = CubeDecoder(model, pop_limit=s.beam_limit, stack_size=s.beam_limit,
                                      distortion_limit=distortion_limit)
        else:
            decoders[s] = BeamDecoder(model, variant=s.variant, mode=mode, beam_threshold=s.beam_threshold,
                                      beam_limit=s.beam_limit, ttable_threshold=s.ttable_threshold,
                                      ttable_limit=s.ttable_limit, distortion_limit=distortion_limit)
        return decoders[s]

    how: dict[Setting, str] = {}

    def row(s: Setting, rep: int, o: Outcome) -> None:
        d = decoders[s]
        if isinstance(d, BeamDecoder):
            extra = dict(ep_threshold=d.settings["ep_threshold"], distortion_limit=d.settings["distortion_limit"],
                         weight_normalization=d.normalization, weight_norm=d.norm)
        else:
            extra = dict(ep_threshold=None, distortion_limit=int(d.opts.distortion_limit),
                         weight_normalization=None, weight_norm=None)
        emit(**asdict(s), vector=s.vector(), mode=mode, **extra, search=how[s], repeat=rep, sentences=len(src), source_words=words,
             decode_seconds=round(o.seconds, 6), ms_per_word=round(1000 * o.seconds / words, 6) if words else None,
             hypotheses_evaluated=o.hypotheses,
             hypotheses_per_word=round(o.hypotheses / words, 3) if words else None,
             bleu=first[s].bleu, output_sha=first[s].sha, mean_score=first[s].mean_score,
             **{f"n_{k}": v for k, v in o.counters.items() if k != "hypotheses_evaluated"}, **head_fields(s, o))
        progress()

    def head_fields(s: Setting, o: Outcome) -> dict:
        if not head:
            return {}
        secs = sum(o.each[1:head])
        return dict(head_sentences=head, head_timed_words=head_words, head_decode_seconds=round(secs, 6),
                    head_ms_per_word=round(1000 * secs / head_words, 6) if head_words else None,
                    head_bleu=round(bleu(first[s].outputs[:head], refs[:head]), 4))

    def quality(s: Setting, origin: str = search) -> tuple[float, int]:
        if s not in first:
            how[s] = origin
            o = decode_all(decoder(s), src, refs)
            first[s] = o
            order.append(s)
            row(s, 0, o)
        return first[s].bleu, first[s].hypotheses

    for v in variants:
        if search == "grid":
            for s in full_grid(v, grid):
                quality(s)
        else:
            hill_climb(v, grid, quality)
    ours: dict[str, Outcome] = {}
    for p in peers:
        kind, size = peer_spec(p)
        s = Setting(kind, -1.0, -1.0, 0, size)
        quality(s, "peer")
        ours[p] = first[s]
    if cross:
        for a, b in (("pharaoh", "de"), ("de", "de+ep")):
            if a in variants and b in variants:
                for s in [x for x in order if x.variant == b]:
                    quality(Setting(a, s.ttable_threshold, s.beam_threshold, s.ttable_limit, s.beam_limit), "cross")
    proto = repeats if isinstance(repeats, Protocol) else Protocol(repeats=max(1, repeats))
    if proto.repeats < 2:
        return

    def time_point(r: int, s: Setting) -> float:
        rep = r + 1  # after the exploration pass
        o = decode_all(decoders[s], src, refs)
        must_agree(o.outputs == first[s].outputs and o.hypotheses == first[s].hypotheses,
                   f"{s}: repeat {rep} gave other outputs than repeat 0")
        row(s, rep, o)
        return o.seconds * 1e9

    tasks = live(ours) if live else []  # their checked runs first, outside the timed loop
    timed = replace(proto, repeats=proto.repeats - 1, max_repeats=max(0, proto.max_repeats - 1))
    Sweep("moore_quirk", timed, writer).points(order[::-1], time_point, key=str).add(
        *tasks, peers=[t.key for t in tasks]).run()


def peer_spec(p: str) -> tuple[str, int]:
    """``normal:S`` / ``cube:P`` (--peers) as (search, size); ValueError naming the option otherwise."""
    kind, _, size = p.partition(":")
    if kind not in ("normal", "cube") or not size.isdigit() or not 1 <= int(size) <= 100_000:
        raise ValueError(f"--peers {p!r}: expected normal:STACK_SIZE or cube:POP_LIMIT")
    return kind, int(size)


@dataclass(frozen=True)
class Live:
    """One live Moses configuration: ``config`` (the oracle's run names: m2-normal200, m2-cube400, m1-normal200,
    m1-normal200-edc), the program (a config/peers.yaml entry), its search and sizes, extra arguments, the --peers
    spec of our search it is checked against, and how many of the verses it decodes (0: all)."""
    config: str
    program: str
    search: str
    size: int
    ours: str
    extra: tuple[str, ...] = ()
    sentences: int = 0

    def label(self, peer_label: str) -> str:
        what = (f"cube pruning, pop limit {self.size}, -s {self.size}" if self.search == "cube"
                else f"normal search -s {self.size}")
        return f"{peer_label} {what}" + "".join(f" {x}" for x in self.extra)


def live_configs(programs: Iterable[str], peers: Iterable[str], moses1_sentences: int) -> list[Live]:
    """The live Moses runs: moses2 at every --peers setting, moses (Moses v1) at every normal:S, plain and with
    -early-distortion-cost, on the first ``moses1_sentences`` verses."""
    out: list[Live] = []
    specs = [(p, *peer_spec(p)) for p in peers]
    for prog in programs:
        for p, kind, size in specs:
            if prog == "moses2":
                out.append(Live(f"m2-{kind}{size}", prog, kind, size, p))
            elif prog == "moses" and kind == "normal":
                out.append(Live(f"m1-normal{size}", prog, kind, size, p, (), moses1_sentences))
                out.append(Live(f"m1-normal{size}-edc", prog, kind, size, p, ("-early-distortion-cost",),
                                moses1_sentences))
            elif prog not in ("moses2", "moses"):
                raise ValueError(f"--live-peers {prog}: moses2 or moses (Moore & Quirk's comparison names its "
                                 "Moses runs)")
        if not any(c.program == prog for c in out):
            raise ValueError(f"--live-peers {prog}: no setting to run it at (--peers {','.join(peers) or 'none'}: "
                             "moses2 runs at every normal:S and cube:P, moses at every normal:S)")
    return out


def live_tasks(configs: list[Live], ini: str, src: list[str], refs: list[str], ours: "dict[str, Outcome]",
               emit: Callable[..., object], tmp: str) -> list:
    """Each live configuration's checked run (1-best, BLEU, identity with our search of the same setting: a
    ``moses_peer`` row; a program not built: a row saying so) and its timed point (smtbench.protocol.Task: a
    ``moses_timing`` row per repeat, loading subtracted as in ``bench moses_decode``)."""
    import os

    from .. import peers as registry
    from ..decode import moses_run
    from ..decode.compare import peer_identity
    from ..protocol import Task
    from .harness import loading_subtracted, must_agree

    entries = registry.load()
    tasks: list[Task] = []
    for c in configs:
        peer = entries[c.program]
        n = c.sentences if 0 < c.sentences < len(src) else len(src)
        base = dict(kind="moses_peer", config=c.config, program=c.program, system=c.label(peer.label),
                    search=c.search, stack_size=c.size, pop_limit=c.size if c.search == "cube" else None,
                    extra_args=" ".join(c.extra), sentences=n, threads=1, clock="wall", checked_against=c.ours)
        missing = peer.missing()
        if missing:  # a row saying so, never a silent skip
            emit(**base, status=missing)
            continue
        dec = moses_run.moses_decoder(c.program, ini, c.search, c.size, c.size if c.search == "cube" else None,
                                      threads=1, extra=c.extra)
        folder = os.path.join(tmp, c.config)
        os.makedirs(folder, exist_ok=True)
        inp = os.path.join(folder, "input")
        with open(inp, "w", encoding="utf-8") as fh:
            fh.write("".join(s + "\n" for s in src[:n]))
        one = moses_run.first_line_file(inp, folder)
        timed_words = sum(len(split_words(s)) for s in src[1:n])

        timing = _timing_rows(emit, c, n, timed_words)

        # the checked run (outputs kept), timed like every later repeat: repeat 0, beside our exploration pass
        out: list = []
        full, first_s, secs = loading_subtracted(
            lambda path: (out.append(moses_run.run(dec, path, loading=path == one)) or out[-1]).wall_s, inp, one)
        r = out[0]
        must_agree(len(r.lines) == n and r.scores is not None,
                   f"{dec.describe()}: {len(r.lines)} output lines for {n} input lines")
        mine = ours[c.ours]
        ident = peer_identity(c.program, mine.outputs[:n], mine.scores[:n], r.lines, r.scores, digits=r.digits or 6,
                              line_digits=r.line_digits,
                              where=f"{dec.describe()} < {c.config} input", strict=dec.strict)
        emit(**base, status="ok", command=dec.describe(), source_words=sum(len(split_words(s)) for s in src[:n]),
             timed_words=timed_words, bleu=round(bleu(r.lines, refs[:n]), 4),
             output_sha=hashlib.sha256("\n".join(r.lines).encode()).hexdigest()[:16],
             mean_score=round(statistics.fmean(r.scores), 6) if r.scores else 0.0,
             **ident.as_dict("identity"), allocator=_allocator(dec.argv[0]))
        timing(0, full, first_s, secs)

        def fn(rep: int, dec=dec, inp=inp, one=one, timing=timing) -> float:
            return timing(rep + 1, *loading_subtracted(
                lambda path: moses_run.run(dec, path, keep_output=False, loading=path == one).wall_s, inp, one))
        tasks.append(Task(c.config, fn))
    return tasks


def _timing_rows(emit: Callable[..., object], c: Live, n: int, timed_words: int) -> Callable[..., float]:
    """The ``moses_timing`` row of one repeat of ``c`` (whole input, first line, their difference), its ns."""
    def timing(rep: int, full: float, first_s: float, secs: float) -> float:
        emit(kind="moses_timing", config=c.config, program=c.program, repeat=rep, sentences=n, threads=1,
             clock="wall", wall_seconds=round(full, 4), first_line_seconds=round(first_s, 4),
             decode_seconds=round(secs, 4), timed_words=timed_words,
             ms_per_word=round(1000 * secs / timed_words, 6) if timed_words and secs > 0 else None)
        return secs * 1e9
    return timing


def _allocator(program: str) -> str:
    from .moses_decode import _allocator as allocator
    return allocator(program)


PAPER_LIMITS = "5,10,15,20,25"


def _floats(text: str, name: str) -> list[float]:
    import math
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{name} {text!r}: expected comma-separated numbers") from None
    if not vals or any(math.isnan(v) or v < 0 or v > 1e6 for v in vals):
        raise ValueError(f"{name} {text!r}: expected numbers in 0..1e6")
    return sorted(set(vals))


def main(args: argparse.Namespace) -> int:
    """`bench moore_quirk` (options: VERBS above)."""
    from ..benchutil import model_path, parse_int_list, require_range
    from ..decode.beam import VARIANTS
    from ..decode.compare import read_lines
    from ..decode.model import PhraseModel
    from .harness import progress, rows as open_rows

    protocol = Protocol.from_args(args)
    require_range("--sentences", args.sentences, 0, 10**7)
    require_range("--every", args.every, 1, 10**6)
    require_range("--moses1-sentences", args.moses1_sentences, 0, 10**7)
    variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise ValueError(f"--variants {args.variants!r}: each one of {', '.join(VARIANTS)}")
    from ..decode.ini import load_ini
    table_limit = load_ini(args.config).feature("PhraseDictionaryMemory").table_limit  # before the slow load
    limits = sorted(set(parse_int_list(args.limits or PAPER_LIMITS, 1, 10**6, "--limits")))
    if args.limits is None and table_limit:
        limits = [x for x in limits if x <= table_limit] or [table_limit]
    if table_limit and max(limits) > table_limit:
        raise ValueError(f"--limits {args.limits}: {args.config} loads table-limit={table_limit} translations "
                         f"per source phrase; raise it to at least {max(limits)}")
    grid = Grid(_floats(args.thresholds, "--thresholds"), limits,
                sorted(set(parse_int_list(args.pharaoh_beam_limits, 1, 10**6, "--pharaoh-beam-limits"))),
                tuple(sorted(set(parse_int_list(args.extra_beam_limits, 1, 10**6, "--extra-beam-limits"))))
                if args.extra_beam_limits else ())
    src, refs = read_lines(args.input), read_lines(args.reference)
    if len(src) != len(refs):
        raise ValueError(f"{args.input}: {len(src)} lines, but {args.reference} has {len(refs)}")
    src, refs = src[::args.every], refs[::args.every]
    n = args.sentences or len(src)
    model = PhraseModel(args.config)
    weights = {f.name: f.weights for f in model.config.features}
    lm_order = next((int(f.args.get("order", 0)) for f in model.config.features if f.kind == "KENLM"), None)
    fixed = {"model": model_path(args.config), "input": model_path(args.input)}
    our_peers = [x for x in args.peers.split(",") if x]
    configs = live_configs([x for x in args.live_peers.split(",") if x], our_peers, args.moses1_sentences)
    if configs:
        from .. import moses_peer
        from .. import peers as registry
        registry.select(args.live_peers.split(","), "moore_quirk", registry.load(), option="--live-peers")
        if args.mode != "moses" or args.distortion_limit is not None:
            raise ValueError("--live-peers: Moses decodes the ini as it is: Moses mode (--mode moses) and the ini's "
                             "distortion limit (no --distortion-limit)")
        fixed.update({f"{prog}_allocator": _allocator(str(moses_peer.bin_dir() / prog)) if moses_peer.available(prog)
                      else None for prog in ("moses2", "moses")})  # every row says how Moses was built
    import tempfile
    with open_rows("moore_quirk", args.out, fixed) as rows, progress(None, args.progress) as bar, \
            tempfile.TemporaryDirectory(prefix="smtbench-moore-quirk-") as tmp:
        emit = lambda **r: rows.emit(weights=weights, lm_order=lm_order, every=args.every, **r)  # noqa: E731
        live = (lambda ours: live_tasks(configs, args.config, src[:n], refs[:n], ours, rows.emit, tmp)) \
            if configs else None
        sweep(model, src[:n], refs[:n], variants, grid, args.search, args.mode, args.distortion_limit,
              protocol, emit, bar.update, cross=not args.no_cross, peers=our_peers, writer=rows, live=live,
              head=args.moses1_sentences if any(c.sentences for c in configs) else 0)
    return 0
