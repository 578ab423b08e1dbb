"""The repeat protocol of every sweep: paired repeats, confidence intervals, adaptive repeats and a slow-spell probe.

This VM's memory slows down by 1.4-2x for minutes at a time, so one number per point says little. The protocol:

- **Paired repeats.** Each repeat times every compared point once, in an order that alternates (forward on even
  repeats, reversed on odd ones) or is shuffled from a recorded seed. Rows keep every repeat; a ratio ("A is r x
  faster than B") is computed per repeat from the two points of that repeat, so a spell that slows a whole repeat
  cancels out of its ratio.
- **Confidence intervals.** :func:`ratio_ci` turns the per-repeat ratios into an estimate (their geometric mean) and
  a 95% interval: a percentile bootstrap of the mean log-ratio, expanded for small n by Hesterberg's factor
  sqrt(n/(n-1)) * t(n-1)/z (the plain percentile bootstrap is too narrow below ~10 repeats; with the factor its
  coverage is near the nominal one from n = 3 on). The bootstrap's seed is fixed, so a table re-rendered from the
  same rows is byte-identical.
- **Adaptive repeats.** After ``repeats`` repeats the loop continues, up to ``max_repeats``, until every declared
  ratio's interval half-width is under ``target`` (a share of the ratio) or the ``budget_s`` time budget is spent;
  rows record the target, the budget and why the loop stopped (``protocol_stop`` on the last repeat's rows).
- **Slow-spell probe.** :class:`SpellProbe` walks dependent loads over a buffer well beyond L3 (tens of ms,
  ``csrc/util/spellprobe.c``). It is taken a few times at the run's start and before and after every repeat; the larger
  of a repeat's two is recorded as ``spell_probe_ns`` with its rows. The calibration a repeat is judged against is
  the **median of every walk before it** (the start's and the earlier repeats'), recorded as
  ``spell_calibration_ns``. (A minimum would be biased low: on these VMs the walks right after the buffer is
  written run at 50-100 ns, from a host cache larger than the 32 MiB the guest is shown, and the walks after a
  timed point at 200-260 ns; a running minimum flagged almost every repeat of a quiet run.) A repeat whose probe
  exceeds ``spell_factor`` x the calibration is flagged and retaken (at most ``max_retakes`` times per repeat); the
  flagged attempt's rows stay in the output with ``retaken=True`` and are left out of every ratio. Once the time
  budget is spent, a flagged repeat is kept (flagged) instead of retaken: the budget bounds a run's wall time to
  about max(budget, ``repeats`` x one repeat) however noisy the machine.
- **Focus** (``--focus``, for drivers that name their headline points): the first ``repeats`` time every point; the
  repeats after them time only the points the headline ratios compare (e.g. the sequential path, the automaton at
  the best queue size of those first repeats, KenLM's probing model), so a sweep of 50 points gets ten times the
  repeats of its headline ratios in the same budget. Rows of those repeats say ``protocol_focused``; the other
  points keep their first repeats.

- **Machine regime** (``--regime-reference FILE``, for drivers that give a working-set probe): the spell probe judges
  a repeat against its own run, so a regime that lasts the whole run (the VM's caches or memory slower or faster for
  half an hour) passes unseen, and memory-bound ratios move with it between runs (latency hiding gains more when
  latency is higher). A :class:`RegimeProbe` is a short walk of the sweep's own kind over the model's own memory
  (e.g. the sequential scorer over the first ~200,000 queries), taken before and after every repeat and recorded
  as ``regime_probe_ns``; ``smtbench report regime-reference`` turns the kept repeats of a run's rows into a reference
  file (the median per model, with the machine, run ids and git sha it came from). With a reference for this
  machine and model, a repeat whose probe is outside [ref / ``regime_factor``, ref x ``regime_factor``] is off the
  machine's reference regime: it is retaken after a pause of ``regime_pause_s`` (its rows stay, ``retaken``), for
  at most ``regime_wait_s`` of pauses per run; after that, off repeats are kept and say ``regime_off``. Pauses do
  not count against the time budget. Tables show the run's regime (median probe / reference), so two runs are
  compared at the regime they were taken in.

Drivers build a :class:`RepeatLoop` from :class:`Task` s (one per timed point: a function of the repeat number that
times the point once, emits its row(s) through the :class:`~smtbench.benchutil.RowWriter` and returns the time it
measured, in ns) and :class:`Ratio` s (the headline ratios that drive the adaptive stop). Report modules compute
every measured ratio's interval from rows with :func:`paired_ratios` / :func:`ratio_columns`.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
import uuid
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Callable, Iterable, Mapping, Sequence


CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20261125  # fixed: the same rows give the same interval


# ----------------------------------------------------------------------------------------------- intervals

def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (exact for df 1 and 2; Abramowitz & Stegun 26.7.5 beyond, < 0.1% off from df 3)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p)))
    z = NormalDist().inv_cdf(p)
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


@dataclass(frozen=True)
class CI:
    """A ratio's estimate (geometric mean of the per-repeat ratios), its interval and the number of repeats."""
    estimate: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width as a share of the estimate (inf when there is no interval)."""
        if self.n < 2 or not math.isfinite(self.low) or not math.isfinite(self.high) or self.estimate <= 0:
            return math.inf
        return (self.high - self.low) / 2 / self.estimate

    def judge(self, target: float) -> str:
        """'meets' when the lower bound reaches the target, 'misses' when the upper bound stays below it,
        'undecided' when the interval straddles it (or there is none)."""
        if self.n >= 2 and self.low >= target:
            return "meets"
        if self.n >= 2 and self.high < target:
            return "misses"
        return "undecided"


NO_CI = CI(math.nan, math.nan, math.nan, 0)


def ratio_ci(ratios: Iterable[float], confidence: float = CONFIDENCE, resamples: int = BOOTSTRAP_RESAMPLES,
             seed: int = BOOTSTRAP_SEED) -> CI:
    """Interval of per-repeat ratios (all > 0): expanded percentile bootstrap of their mean log (see the module
    docstring). One ratio gives the estimate with no interval (low = high = nan); none gives :data:`NO_CI`."""
    import numpy as np   # (here: every CLI command imports this module through the bench verbs' registration)
    x = np.log(np.asarray([r for r in ratios if r is not None and math.isfinite(r) and r > 0], dtype=np.float64))
    n = len(x)
    if n == 0:
        return NO_CI
    m = float(x.mean())
    if n == 1:
        return CI(math.exp(m), math.nan, math.nan, 1)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    a = (1 - confidence) / 2
    q_lo, q_hi = np.quantile(means, [a, 1 - a])
    f = math.sqrt(n / (n - 1)) * t_quantile(1 - a, n - 1) / NormalDist().inv_cdf(1 - a)
    return CI(math.exp(m), math.exp(m - f * (m - q_lo)), math.exp(m + f * (q_hi - m)), n)


# ----------------------------------------------------------------------------------------------- the probe

class SpellProbe:
    """Dependent loads over ``mib`` MiB (``csrc/util/spellprobe.c``); :meth:`measure` returns ns per load.

    With ``warmup`` (the default) each measurement first walks ``steps`` loads untimed, then times the next
    ``steps`` (other lines, mostly the same pages): a buffer left idle reads slower at first on these VMs, which is
    the probe's own buffer, not the memory the measured points keep hot. On a quiet machine (2026-11-27) the first
    walk after 30-60 s idle read 214-274 ns without the warm-up and 160-184 ns with it, the next walk 173-207 and
    156-174 ns (the walk before, which restarted at slot 0 and re-read the same lines, 900-1300 ns after 10-60 s
    idle against 180 ns right after another walk: CONTRIBUTING, 'Slow spells')."""

    def __init__(self, mib: int = 128, steps: int = 50_000, seed: int = 1, warmup: bool = True):
        from .native import check, ffi, lib

        self._lib, self._ffi = lib, ffi
        from .resources import require_memory
        require_memory(mib << 20, "the slow-spell probe's buffer")
        out = ffi.new("sb_spell **")
        check(lib.sb_spell_create(mib << 20, seed, out), "spell probe")
        self._p = ffi.gc(out[0], lib.sb_spell_free)
        self.steps = steps
        self.mib = mib
        self.warmup = warmup

    def measure(self) -> float:
        from .native import check

        ns = self._ffi.new("double *")
        sink = self._ffi.new("uint64_t *")
        for _ in range(2 if self.warmup else 1):  # the last walk is the one timed
            check(self._lib.sb_spell_walk(self._p, self.steps, ns, sink), "spell probe walk")
        self.last_slot = int(sink[0])  # where the walk stopped (a checksum: same seed, size and walks, same slot)
        return float(ns[0])


# ----------------------------------------------------------------------------------------------- the loop

@dataclass
class Protocol:
    """The settings of the repeat loop (the `bench` verbs' shared options, recorded in every row)."""
    repeats: int = 3            # repeats always taken
    max_repeats: int = 0        # adaptive: up to this many (0 = exactly `repeats`)
    target: float = 0.05        # stop when every declared ratio's half-width / ratio is below this
    budget_s: float = 0.0       # ... or when the loop has run this long (0 = no budget)
    order: str = "alternate"    # alternate (reverse on odd repeats) | shuffle (seeded)
    seed: int | None = None     # the shuffle's seed (drawn and recorded when None)
    spell_factor: float = 1.25  # a repeat whose probe exceeds factor x calibration is flagged and retaken
    max_retakes: int = 2        # per repeat
    probe_mib: int = 128        # 0 = no probe
    probe_steps: int = 50_000   # ~5-50 ms: 100-900 ns per load on this VM
    focus: bool = False         # after `repeats`, time only the headline points (drivers that name them)
    regime_reference: str = ""  # a reference file (smtbench report regime-reference): repeats off its regime are retaken
    regime_factor: float = 1.25  # off the regime: probe outside [ref / factor, ref x factor]
    regime_wait_s: float = 0.0  # pauses (waiting for the reference regime) per run at most
    regime_pause_s: float = 30.0  # one pause before retaking a repeat off the regime

    def validate(self) -> None:
        if not 1 <= self.repeats <= 1000:
            raise ValueError(f"--repeats {self.repeats}: must be in 1..1000")
        if self.max_repeats and not self.repeats <= self.max_repeats <= 1000:
            raise ValueError(f"--max-repeats {self.max_repeats}: must be 0 (fixed) or in --repeats..1000")
        if not 0 < self.target < 10:
            raise ValueError(f"--ci-target {self.target}: must be a share in (0, 10)")
        if not 0 <= self.budget_s <= 7 * 86400:
            raise ValueError(f"--time-budget {self.budget_s}: must be 0..604800 seconds")
        if self.order not in ("alternate", "shuffle"):
            raise ValueError(f"--order {self.order!r}: alternate or shuffle")
        if not 1.0 < self.spell_factor <= 100:
            raise ValueError(f"--spell-factor {self.spell_factor}: must be in (1, 100]")
        if not 0 <= self.max_retakes <= 100:
            raise ValueError(f"--max-retakes {self.max_retakes}: must be in 0..100")
        if self.probe_mib and not 1 <= self.probe_mib <= 65536:
            raise ValueError(f"--spell-probe-mib {self.probe_mib}: must be 0 (no probe) or 1..65536")
        if not 1 <= self.probe_steps <= 1 << 32:
            raise ValueError(f"probe steps {self.probe_steps}: must be >= 1")
        if not 1.0 < self.regime_factor <= 100:
            raise ValueError(f"--regime-factor {self.regime_factor}: must be in (1, 100]")
        if not 0 <= self.regime_wait_s <= 86400:
            raise ValueError(f"--regime-wait {self.regime_wait_s}: must be 0..86400 seconds")
        if not 0 <= self.regime_pause_s <= 3600:
            raise ValueError(f"--regime-pause {self.regime_pause_s}: must be 0..3600 seconds")

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser, repeats: int = 3) -> None:
        """The shared options (every `bench` verb calls this instead of defining its own --repeats)."""
        g = p.add_argument_group("repeat protocol (smtbench.protocol)")
        g.add_argument("--repeats", type=int, default=repeats, help="repeats always taken (each times every point)")
        g.add_argument("--max-repeats", type=int, default=0,
                       help="adaptive: repeat up to this many times until every headline ratio's 95%% interval is "
                            "within --ci-target (0 = exactly --repeats)")
        g.add_argument("--ci-target", type=float, default=0.05, help="half-width / ratio to stop at (default 0.05)")
        g.add_argument("--time-budget", type=float, default=0.0, help="seconds of repeating before stopping anyway "
                                                                      "(0 = none)")
        g.add_argument("--order", choices=("alternate", "shuffle"), default="alternate",
                       help="the points' order per repeat: alternate (reversed on odd repeats) or shuffle (--order-seed)")
        g.add_argument("--order-seed", type=int, default=None, help="the shuffle's seed (recorded; drawn when absent)")
        g.add_argument("--spell-factor", type=float, default=1.25,
                       help="flag and retake a repeat whose slow-spell probe exceeds this x the calibration")
        g.add_argument("--max-retakes", type=int, default=2, help="retakes per repeat (bounded)")
        g.add_argument("--spell-probe-mib", type=int, default=128, help="the probe's buffer (0 = no probe)")
        g.add_argument("--focus", action="store_true",
                       help="after --repeats, repeat only the points the headline ratios compare (drivers that name "
                            "them; others time every point): more repeats of those ratios in the same time")
        g.add_argument("--regime-reference", default="", metavar="FILE",
                       help="the machine's reference regime (smtbench report regime-reference): repeats whose working-set "
                            "probe is off it are retaken after a pause (drivers with a working-set probe)")
        g.add_argument("--regime-factor", type=float, default=1.25,
                       help="off the reference regime: probe outside [ref / this, ref x this]")
        g.add_argument("--regime-wait", type=float, default=0.0,
                       help="seconds of pauses per run waiting for the reference regime (0 = retake without waiting)")
        g.add_argument("--regime-pause", type=float, default=30.0, help="seconds of one pause before a retake")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Protocol":
        pr = cls(repeats=args.repeats, max_repeats=args.max_repeats, target=args.ci_target,
                 budget_s=args.time_budget, order=args.order, seed=args.order_seed, spell_factor=args.spell_factor,
                 max_retakes=args.max_retakes, probe_mib=args.spell_probe_mib,
                 focus=bool(getattr(args, "focus", False)),
                 regime_reference=getattr(args, "regime_reference", "") or "",
                 regime_factor=getattr(args, "regime_factor", 1.25), regime_wait_s=getattr(args, "regime_wait", 0.0),
                 regime_pause_s=getattr(args, "regime_pause", 30.0))
        pr.validate()
        return pr

    @property
    def upto(self) -> int:
        return max(self.repeats, self.max_repeats)


@dataclass
class Task:
    """One timed point: ``fn(repeat)`` times it once, emits its row(s) and returns the time it measured in ns
    (None when it takes part in no declared ratio)."""
    key: str
    fn: Callable[[int], float | None]


@dataclass
class Ratio:
    """A headline ratio of one repeat's times (a mapping task key -> ns), e.g. ``Ratio.speedup('x', 'a', 'b')``."""
    name: str
    of: Callable[[Mapping[str, float]], float | None]

    @classmethod
    def speedup(cls, name: str, fast: str, slow: str) -> "Ratio":
        """time(slow) / time(fast): how many times faster `fast` is."""
        def of(t: Mapping[str, float]) -> float | None:
            a, b = t.get(fast), t.get(slow)
            return b / a if a and b else None
        return cls(name, of)


@dataclass
class RegimeProbe:
    """A driver's working-set probe: ``fn()`` walks a short, fixed part of the sweep over the model's own memory and
    returns ns per unit (e.g. per query); ``name`` is its entry in a reference file (``<experiment>/<model>``)."""
    name: str
    fn: Callable[[], float]


REFERENCE_FORMAT = "smtbench-regime-reference/1"
MACHINE_KEYS = ("machine_host", "machine_cpu", "machine_cores")  # rows' fields that say which machine it is


def this_machine() -> dict[str, Any]:
    from .machine import facts, row_fields

    f = row_fields(facts(with_gpu=False))
    return {k: f.get(k) for k in MACHINE_KEYS}


def reference_ns(path: str, name: str) -> tuple[float | None, str]:
    """(the reference probe in ns, '') for ``name`` on this machine, or (None, why not). A file that is not a
    reference file is a one-line error naming it."""
    import json

    if not path:
        return None, "no reference"
    if not os.path.exists(path):
        return None, f"no reference file {path}"
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        if d.get("format") != REFERENCE_FORMAT or not isinstance(d.get("entries"), dict):
            raise ValueError("not a regime reference")
        machine, entries = d["machine"], d["entries"]
        if not isinstance(machine, dict) or not all(isinstance(e, dict) for e in entries.values()):
            raise ValueError("no machine or a malformed entry")
        ns = entries[name].get("ns") if name in entries else None
        if ns is not None and not (isinstance(ns, (int, float)) and 0 < ns < 1e12):
            raise ValueError(f"entry {name}: ns {ns!r}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: not a regime reference file ({exc})") from None
    here = this_machine()
    if any(machine.get(k) != here[k] for k in MACHINE_KEYS):
        return None, f"{path} is another machine's ({', '.join(str(machine.get(k)) for k in MACHINE_KEYS)})"
    if ns is None:
        return None, f"{path} has no entry {name}"
    return float(ns), ""


@dataclass
class Summary:
    repeats: int                 # repeats kept
    attempts: int                # repeats taken, retakes included
    retaken: int                 # attempts flagged and retaken
    flagged_kept: int            # repeats flagged but kept (retakes exhausted)
    stop: str                    # target | budget | max_repeats | fixed
    seed: int | None
    calibration_ns: float | None
    cis: dict[str, CI] = field(default_factory=dict)
    regime_ref_ns: float | None = None   # the machine's reference regime (None: no reference for this run)
    regime_off_kept: int = 0             # repeats off the reference regime but kept (no wait left)
    regime_waited_s: float = 0.0         # pauses spent waiting for the reference regime
    times: list[dict[str, float]] = field(default_factory=list)  # kept repeats' times per task key


class NullWriter:
    """For drivers whose rows go elsewhere: the loop's hold/release/context do nothing."""
    context: dict[str, Any] = {}

    def hold(self) -> None:
        pass

    def release(self, **extra: Any) -> None:
        pass


class RepeatLoop:
    """Runs ``tasks`` under ``protocol`` (see the module docstring); rows go through ``writer`` (held per repeat so
    that the repeat's probe and flags are written with them)."""

    def __init__(self, protocol: Protocol, writer: Any, tasks: Sequence[Task], ratios: Sequence[Ratio] = (),
                 probe: Callable[[], float] | None = None, progress: Any = None,
                 clock: Callable[[], float] = time.monotonic,
                 focus: Callable[[list[dict[str, float]]], Iterable[str]] | None = None,
                 regime: RegimeProbe | None = None, sleep: Callable[[float], None] = time.sleep):
        protocol.validate()
        keys = [t.key for t in tasks]
        if len(set(keys)) != len(keys):
            raise ValueError(f"task keys must be unique: {keys}")
        self.p, self.writer, self.tasks, self.ratios = protocol, writer, list(tasks), list(ratios)
        self.progress, self.clock = progress, clock
        # protocol.focus: after the first `repeats`, only the tasks focus(kept repeats' times) names (the points the
        # headline ratios compare, e.g. the best queue size so far): the other points keep their first repeats
        if protocol.focus and focus is None:
            raise ValueError("--focus: this sweep names no headline points to focus on (mokry_lm and mokry_hash do)")
        self.focus = focus if protocol.focus else None
        self.active = self.tasks
        self.regime, self.sleep = regime, sleep
        self.regime_ref, self.regime_why = (reference_ns(protocol.regime_reference, regime.name) if regime
                                            else (None, "no working-set probe"))
        if probe is None and protocol.probe_mib:
            probe = SpellProbe(protocol.probe_mib, protocol.probe_steps).measure
        self.probe = probe
        self.seed = protocol.seed
        if protocol.order == "shuffle" and self.seed is None:
            self.seed = int.from_bytes(os.urandom(4), "little")
        self.run_id = uuid.uuid4().hex[:12]

    def order(self, rep: int, attempt: int) -> list[Task]:
        if self.p.order == "shuffle":
            out = list(self.active)
            random.Random(f"{self.seed}/{rep}/{attempt}").shuffle(out)
            return out
        return list(self.active) if rep % 2 == 0 else self.active[::-1]

    def _narrow(self, kept: list[dict[str, float]]) -> None:
        """Once the first `repeats` are kept: the tasks the focus names (all of them if it names none we have)."""
        if self.focus is None or self.active is not self.tasks:
            return
        keys = set(self.focus(kept))
        active = [t for t in self.tasks if t.key in keys]
        if active:
            self.active = active

    def cis(self, times: list[dict[str, float]]) -> dict[str, CI]:
        return {r.name: ratio_ci([r.of(t) for t in times]) for r in self.ratios}

    def _decide(self, rep_done: int, times: list[dict[str, float]], t0: float) -> str:
        # t0: the run's start moved on by the pauses spent waiting for the regime (they are not the budget's)
        """'' to go on, else why to stop after ``rep_done`` kept repeats."""
        p = self.p
        if rep_done < p.repeats:
            return ""
        if not p.max_repeats or p.max_repeats == p.repeats:
            return "fixed"
        if self.ratios and all(c.half_width <= p.target for c in self.cis(times).values()):
            return "target"
        if not self.ratios:
            return "fixed"
        if p.budget_s and self.clock() - t0 >= p.budget_s:
            return "budget"
        if rep_done >= p.max_repeats:
            return "max_repeats"
        return ""

    def run(self) -> Summary:
        p, w = self.p, self.writer
        calib = None
        walks: list[float] = []  # every probe walk so far: the calibration is their median
        if self.probe is not None:
            self.probe()  # page the buffer in
            walks = [self.probe() for _ in range(3)]
            calib = statistics.median(walks)
        base = dict(run_id=self.run_id, protocol_order=p.order, protocol_seed=self.seed,
                    protocol_target=p.target, protocol_budget_s=p.budget_s, protocol_min_repeats=p.repeats,
                    protocol_max_repeats=p.upto, spell_factor=p.spell_factor, spell_calibration_ns=calib)
        ref = self.regime_ref
        if self.regime is not None:
            self.regime.fn()  # page the walk's part of the model in
            base.update(regime_name=self.regime.name, regime_ref_ns=ref, regime_factor=p.regime_factor,
                        regime_reference=p.regime_reference or None, regime_note=self.regime_why or None)
        t0 = self.clock()
        waited = 0.0
        regime_off_kept = 0
        kept: list[dict[str, float]] = []
        attempts = retaken = flagged_kept = 0
        stop = ""
        rep = 0
        while not stop:
            attempt = 0
            while True:
                attempts += 1
                w.hold()
                times: dict[str, float] = {}
                # the working-set walks outside the spell probe's, so that the timed points start, as before, right
                # after a walk that has flushed the caches
                r0 = self.regime.fn() if self.regime else None
                p0 = self.probe() if self.probe else None
                for pos, task in enumerate(self.order(rep, attempt)):
                    w.context = {**base, "attempt": attempt, "order_pos": pos,
                                 **({"protocol_focused": self.active is not self.tasks} if self.focus else {})}
                    v = task.fn(rep)
                    if v is not None:
                        times[task.key] = float(v)
                    if self.progress is not None:
                        self.progress.update()
                w.context = {}
                r1 = self.regime.fn() if self.regime else None  # right after the points, before the spell walk
                p1 = self.probe() if self.probe else None
                probe_ns = max(p0, p1) if p0 is not None and p1 is not None else None
                # judged against the median of the walks before this repeat: its own cannot hide a spell
                flagged = bool(calib and probe_ns and probe_ns > p.spell_factor * calib)
                # the machine's regime: the working-set walks around the repeat against the reference
                regime_ns = (r0 + r1) / 2 if r0 is not None and r1 is not None else None
                off = bool(ref and regime_ns and not ref / p.regime_factor <= regime_ns <= ref * p.regime_factor)
                over_budget = bool(p.budget_s) and self.clock() - t0 >= p.budget_s
                can_wait = waited + p.regime_pause_s <= p.regime_wait_s
                # the budget bounds retakes too; a repeat off the regime is retaken only while pauses are left
                retake = (flagged or (off and can_wait)) and attempt < p.max_retakes and not over_budget
                stop = "" if retake else self._decide(rep + 1, kept + [times], t0)
                extra = {}
                if self.regime is not None:
                    extra = dict(regime_probe_ns=regime_ns, regime_probe_start_ns=r0, regime_probe_end_ns=r1,
                                 regime_off=off, regime_waited_s=round(waited, 3))
                w.release(spell_probe_ns=probe_ns, spell_probe_start_ns=p0, spell_probe_end_ns=p1,
                          spell_calibration_ns=calib, spell_flagged=flagged, retaken=retake,
                          protocol_stop=stop or None, **extra)
                if probe_ns is not None:
                    walks += [p0, p1]
                    calib = statistics.median(walks)
                if not retake:
                    flagged_kept += flagged
                    regime_off_kept += off
                    kept.append(times)
                    break
                retaken += 1
                attempt += 1
                if off and not flagged and p.regime_pause_s:  # wait for the regime; the budget's clock waits too
                    self.sleep(p.regime_pause_s)
                    waited += p.regime_pause_s
                    t0 += p.regime_pause_s
                if self.progress is not None:
                    self.progress.total = (self.progress.total or 0) + len(self.active)
            rep += 1
            if rep >= p.repeats:
                self._narrow(kept)
            if not stop and self.progress is not None and rep >= p.repeats:
                self.progress.total = (self.progress.total or 0) + len(self.active)
        return Summary(repeats=len(kept), attempts=attempts, retaken=retaken, flagged_kept=flagged_kept, stop=stop,
                       seed=self.seed, calibration_ns=calib, cis=self.cis(kept), times=kept, regime_ref_ns=ref,
                       regime_off_kept=regime_off_kept, regime_waited_s=waited)


def run_points(protocol: Protocol, writer: Any, points: Sequence[Any], fn: Callable[[int, Any], float | None],
               key: Callable[[Any], str] = str, ratios: Sequence[Ratio] = (), progress: Any = None,
               label: str = "") -> Summary:
    """The common case of a sweep driver: ``fn(repeat, point)`` times one point once (emitting its rows) and returns
    its time in ns; every point once per repeat under ``protocol``; the summary goes to stderr."""
    import sys

    tasks = [Task(key(pt), (lambda pt: lambda rep: fn(rep, pt))(pt)) for pt in points]
    summary = RepeatLoop(protocol, writer, tasks, ratios, progress=progress).run()
    print(f"{label + ': ' if label else ''}{describe(summary)}", file=sys.stderr)
    return summary


def describe(s: Summary) -> str:
    """One line for a driver's log."""
    parts = [f"{s.repeats} repeats ({s.attempts} taken, {s.retaken} retaken in slow spells, "
             f"{s.flagged_kept} flagged but kept), stop: {s.stop}"]
    if s.calibration_ns is not None:
        parts.append(f"probe calibration {s.calibration_ns:.1f} ns/load")
    if s.regime_ref_ns is not None:
        parts.append(f"regime reference {s.regime_ref_ns:.1f} ns ({s.regime_waited_s:.0f} s waited, "
                     f"{s.regime_off_kept} repeats kept off it)")
    for k, c in s.cis.items():
        parts.append(f"{k} {c.estimate:.3f} [{c.low:.3f}, {c.high:.3f}]")
    return "; ".join(parts)


# ----------------------------------------------------------------------------------------------- from rows

def kept(df: "Any") -> "Any":
    """Rows that count: drop the attempts a slow spell had retaken (old rows have no `retaken` column)."""
    if "retaken" in df.columns:
        return df[df["retaken"].fillna(False).astype(bool) == False]  # noqa: E712
    return df


def paired_ratios(df: "Any", fast: "Any", slow: "Any", value: str = "elapsed_ns",
                  higher_is_better: bool = False) -> list[float]:
    """Per-repeat ratios from rows: ``fast`` and ``slow`` are boolean masks over ``df`` (one compared point each,
    or several - then the best of them in that repeat); paired on (run_id, repeat) when the rows have run_id,
    else on repeat. Returns slow/fast (for times) or fast/slow (``higher_is_better``, e.g. throughputs)."""
    import pandas as pd

    if "repeat" not in df.columns:
        return []
    d = df.assign(_fast=fast, _slow=slow)
    d = kept(d)
    d = d[d["repeat"].notna() & d[value].notna()]
    keys = ["run_id", "repeat"] if "run_id" in d.columns and d["run_id"].notna().any() else ["repeat"]
    if keys[0] == "run_id":
        d = d.assign(run_id=d["run_id"].fillna(""))
    agg = "max" if higher_is_better else "min"
    a = d[d["_fast"]].groupby(keys)[value].agg(agg)
    b = d[d["_slow"]].groupby(keys)[value].agg(agg)
    j = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    j = j[(j["a"] > 0) & (j["b"] > 0)]
    r = (j["a"] / j["b"]) if higher_is_better else (j["b"] / j["a"])
    return [float(v) for v in r]


def ratio_columns(name: str, ratios: Sequence[float]) -> dict[str, float | int]:
    """The columns ``<name>_paired`` (the geometric mean of the per-repeat ratios: the interval's estimate),
    ``<name>_ci_low``, ``<name>_ci_high``, ``n_repeats`` of one ratio (rounded as tables show)."""
    c = ratio_ci(ratios)
    return {f"{name}_paired": _r(c.estimate) if c.n >= 2 else math.nan, f"{name}_ci_low": _r(c.low),
            f"{name}_ci_high": _r(c.high), "n_repeats": c.n}


def _r(v: float) -> float:
    return round(v, 3) if math.isfinite(v) else math.nan


def spell_counts(df: "Any") -> dict[str, float]:
    """How many repeats were retaken in slow spells, how many flagged repeats were kept (0 for old rows), and the
    median probe of the kept repeats (``probe_ns``: the run's memory regime; NaN without a probe)."""
    if "spell_flagged" not in df.columns or "run_id" not in df.columns:
        return {"retaken": 0, "flagged_kept": 0, "probe_ns": math.nan}
    d = df[df["run_id"].notna()].drop_duplicates(["run_id", "repeat", "attempt"])
    ret = d["retaken"].fillna(False).astype(bool)
    fl = d["spell_flagged"].fillna(False).astype(bool)
    probe = d.loc[~ret, "spell_probe_ns"].dropna() if "spell_probe_ns" in d.columns else d.iloc[:0, 0]
    out = {"retaken": int(ret.sum()), "flagged_kept": int((fl & ~ret).sum()),
           "probe_ns": round(float(probe.median()), 1) if len(probe) else math.nan}
    return {**out, **regime_counts(d[~ret])}


REGIME_COLUMNS = ["regime_probe_ns", "regime", "regime_off_kept"]  # what tables show of a run's machine regime


def regime_counts(d: "Any") -> dict[str, float]:
    """Of the kept repeats (one row each): ``regime`` = median working-set probe / the reference it was judged
    against (NaN without one), ``regime_off_kept`` = repeats kept off it, ``regime_probe_ns`` = the median probe."""
    if "regime_probe_ns" not in d.columns:
        return {}
    probe = d["regime_probe_ns"].dropna()
    ref = d["regime_ref_ns"].dropna() if "regime_ref_ns" in d.columns else probe.iloc[:0]
    med = float(probe.median()) if len(probe) else math.nan
    off = d["regime_off"].fillna(False).astype(bool) if "regime_off" in d.columns else probe.iloc[:0]
    return {"regime_probe_ns": round(med, 2), "regime": round(med / float(ref.iloc[0]), 3) if len(ref) else math.nan,
            "regime_off_kept": int(off.sum())}


__all__ = ["CI", "NO_CI", "NullWriter", "Protocol", "REGIME_COLUMNS", "Ratio", "RegimeProbe", "RepeatLoop", "SpellProbe", "Summary", "Task", "describe", "kept",
           "paired_ratios", "ratio_ci", "ratio_columns", "run_points", "spell_counts", "t_quantile"]


def make_reference(paths: Sequence[str], command: str = "") -> dict[str, Any]:
    """A regime reference from rows files (see the module docstring): per ``regime_name``, the median
    ``regime_probe_ns`` of the kept repeats, with how many, their run ids and git shas; every row must come from one
    machine (a one-line error names the file that does not)."""
    import json

    probes: dict[str, list[float]] = {}
    runs: dict[str, set[str]] = {}
    shas: dict[str, set[str]] = {}
    machine: dict[str, Any] | None = None
    seen: set[tuple[str, Any, Any]] = set()
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    if not isinstance(r, dict):
                        raise ValueError("not an object")
                except ValueError as exc:
                    raise ValueError(f"{path}:{lineno}: not a rows line ({exc})") from None
                name, ns = r.get("regime_name"), r.get("regime_probe_ns")
                if not name or ns is None or r.get("retaken"):
                    continue
                m = {k: r.get(k) for k in MACHINE_KEYS}
                if machine is None:
                    machine = m
                elif m != machine:
                    raise ValueError(f"{path}:{lineno}: rows of another machine ({m}, not {machine})")
                key = (str(r.get("run_id")), r.get("repeat"), name)
                if key in seen:  # one probe per repeat (every row of a repeat carries it)
                    continue
                seen.add(key)
                probes.setdefault(name, []).append(float(ns))
                runs.setdefault(name, set()).add(str(r.get("run_id")))
                shas.setdefault(name, set()).add(str(r.get("machine_git_sha")))
    if not probes:
        raise ValueError(f"{', '.join(paths)}: no kept repeat with a working-set probe (regime_probe_ns)")
    return {"format": REFERENCE_FORMAT, "machine": machine, "command": command,
            "entries": {n: {"ns": round(statistics.median(v), 3), "repeats": len(v), "run_ids": sorted(runs[n]),
                            "git_sha": sorted(shas[n])} for n, v in sorted(probes.items())}}
