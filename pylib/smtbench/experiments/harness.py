"""The one harness every experiment's sweep runs on (its CLI verb: :func:`smtbench.experiments.add_verb`): the timing
lock, the repeat protocol (:mod:`smtbench.protocol`: paired repeats, intervals, adaptive stop, slow-spell probe),
progress, peer points (a peer program timed beside ours, or a row saying it is not built), checksum agreement (a
fast path that disagrees with the plain path fails loudly) and the row writer (:class:`smtbench.benchutil.RowWriter`,
one JSON object per line, machine facts on every row, written atomically)."""
from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..benchutil import RowWriter
from ..errors import ResultMismatch
from ..protocol import NullWriter, Protocol, Ratio, RegimeProbe, RepeatLoop, Summary, Task, describe, run_points
from .. import procs

__all__ = ["Protocol", "Ratio", "RepeatLoop", "Summary", "Task", "NullWriter", "RowWriter", "describe", "run_points",
           "timing_lock", "rows", "progress", "must_agree", "agree", "agree_close", "peer_missing", "not_built",
           "loading_subtracted", "LOCK"]

#: the lock every timing run takes (HELPERS/CONTRIBUTING: `flock /tmp/smtbench-bench.lock ...`)
LOCK = "/tmp/smtbench-bench.lock"


# ----------------------------------------------------------------------------------------------- lock, rows, progress

@contextlib.contextmanager
def timing_lock(path: str | None) -> Iterator[None]:
    """flock(LOCK_EX) on ``path`` for the timed part only, so that two timings never overlap (no path: no lock)."""
    if not path:
        yield
        return
    import fcntl

    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def rows(experiment: str, out: str | None, fixed: Mapping[str, Any] | None = None,
         stdout_when_none: bool = True) -> Iterator[RowWriter]:
    """The row writer of a run: ``out`` written atomically (replaced only when the run succeeds), standard output
    when ``out`` is None (or nowhere, ``stdout_when_none=False``). A run of an experiment that runs Moses
    (``moses_peer.RUNS``) adds each program's allocator to ``fixed``."""
    import os

    from .. import moses_peer
    from ..ioutil import atomic_open

    if experiment in moses_peer.RUNS:  # every row of a run with Moses says how its programs were built
        fixed = {**moses_peer.build_fields(moses_peer.RUNS[experiment]), **(fixed or {})}
    if out:
        with atomic_open(out, "w") as fh:
            yield RowWriter(experiment, fh, fixed=dict(fixed or {}))
    elif stdout_when_none:
        yield RowWriter(experiment, sys.stdout, fixed=dict(fixed or {}))
    else:
        with open(os.devnull, "w") as fh:
            yield RowWriter(experiment, fh, fixed=dict(fixed or {}))


def progress(total: int | None, on: bool, desc: str = "", unit: str = "point"):
    """The sweep's progress bar on stderr (the repeat loop raises its total as it retakes or goes on)."""
    from tqdm import tqdm
    return tqdm(total=total, disable=not on, desc=desc or None, unit=unit, file=sys.stderr)


# ----------------------------------------------------------------------------------------------- agreement

def must_agree(ok: Any, what: str) -> None:
    """The one correctness stop of every experiment: unless ``ok``, a ResultMismatch (a RuntimeError: one line
    from the CLI, exit status 2) saying ``what`` differs. A fast path against the plain path, a repeat against
    repeat 0, a peer's output or total against ours: a time beside another result is no ratio."""
    if not ok:
        raise ResultMismatch(what)


def agree(what: str, values: Mapping[str, Any] | Iterable[tuple[str, Any]], across: str = "points") -> Any:
    """Every point's checksum must be the same (fast paths against the plain path): the one value, or a
    ResultMismatch (a RuntimeError: one line from the CLI) naming ``what``, ``across`` what it must not change, and every point's value."""
    items = list(values.items() if isinstance(values, Mapping) else values)
    distinct = {v for _, v in items}
    must_agree(len(distinct) <= 1, f"{what} differ across {across} (a broken fast path): {dict(items)}")
    return distinct.pop() if distinct else None


def agree_close(what: str, ours: float, theirs: Mapping[str, float], rel_tol: float, abs_tol: float = 0.0) -> None:
    """A peer's total must match ours within float rounding (e.g. KenLM summing in float)."""
    for key, v in theirs.items():
        must_agree(math.isclose(v, ours, rel_tol=rel_tol, abs_tol=abs_tol),
                   f"{what}: {key}: {v!r} differs from ours {ours!r}")


# ----------------------------------------------------------------------------------------------- peers

def peer_missing(*programs: str | None) -> list[str]:
    """The Moses programs among ``programs`` that are not built (None entries ignored)."""
    from .. import moses_peer
    return [p for p in programs if p and not moses_peer.available(p)]


def not_built(writer: RowWriter, missing: Sequence[str] = (), **fields: Any) -> dict:
    """The row a peer point gets where its program is not built (tables show ``moses_peer.NOT_BUILT``)."""
    from .. import moses_peer
    extra = {"missing": ",".join(missing)} if missing else {}
    return writer.emit(**fields, status=moses_peer.NOT_BUILT, **extra)


def loading_subtracted(run: Callable[[str], float], whole: str, first: str) -> tuple[float, float, float]:
    """How every process-timed system is timed alike (ours, Moses2, Moses v1): the wall time of ``run`` on the
    whole input minus its wall time on the input's first line only (loading, start-up, one sentence), taken one
    right after the other in the same repeat. Returns (whole, first, decoding) seconds."""
    w = run(whole)
    f = run(first)
    return w, f, w - f


def timed_process(argv: Sequence[str], input_path: str, cwd: str | None = None) -> tuple[float, bytes]:
    """Wall time and standard output of one process run on ``input_path`` (RuntimeError with its stderr's tail
    when it fails)."""
    import tempfile
    with open(input_path, "rb") as src, tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        r = procs.run(list(argv), stdin=src, stdout=out, stderr=subprocess.PIPE, cwd=cwd)
        wall = time.perf_counter() - t0
        if r.returncode:
            raise RuntimeError(f"{' '.join(argv)} < {input_path}: exit {r.returncode}: "
                               f"{r.stderr.decode(errors='replace').strip()[-1200:]}")
        out.seek(0)
        return wall, out.read()


def working_set_probe(name: str, score_stream: Callable[[Any], Any], tokens: Any, queries: int = 200_000,
                      mark: int = 1 << 31) -> RegimeProbe:
    """The LM sweeps' regime probe (smtbench.protocol): ``score_stream`` (a sequential scorer's, over the model's own
    memory) on the document's first whole sentences of about ``queries`` tokens; ns per token. ``mark``: the bit
    that starts a sentence (lm.backends.SENTENCE_MARK)."""
    import numpy as np

    starts = np.flatnonzero((tokens & np.uint32(mark)) != 0)
    later = starts[starts >= min(queries, len(tokens))]
    part = tokens[: int(later[0])] if len(later) else tokens

    def fn() -> float:
        return float(score_stream(part).elapsed_ns) / len(part)
    return RegimeProbe(name, fn)
