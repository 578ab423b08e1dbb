"""Errors shared across layers (commands raise them; the CLI turns them into messages and exit codes)."""
from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit status 2."""


class StaleBuild(CliError, RuntimeError):
    """The loaded C extension is not the build a measurement asked for (one line, exit status 2, nothing written)."""


class ResultMismatch(CliError, RuntimeError):
    """A correctness check inside a benchmark failed - a live peer's output (Moses' table or extract, KenLM's total)
    or a fast path's checksum differs from ours: the run stops with one line (exit status 2), since a time beside
    something that computed another result is no ratio."""


class PeerFailed(CliError, RuntimeError):
    """A program run as a process (a live peer, or ours beside it: a decoder, a scoring step, a pipeline) exited
    non-zero or wrote what cannot be read: one line naming the command and the last line it printed (exit status
    2), no traceback."""


def last_line(text: str, none: str = "(nothing printed)") -> str:
    """The last non-blank line of a program's output (lines end at \\n), stripped: what a PeerFailed quotes."""
    return next((x.strip() for x in reversed(text.split("\n")) if x.strip()), none)


class UnlikeRatio(ValueError):
    """A declared ratio whose numerator and denominator rows come from different runs (``run_id``), clocks or thread
    counts (report.common.check_like): the report refuses to print it (one line, exit status 2)."""
