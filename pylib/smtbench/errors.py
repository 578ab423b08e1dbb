"""Errors shared across layers (commands raise them; the CLI turns them into messages and exit codes)."""
from __future__ import annotations


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit status 2."""


class StaleBuild(CliError, RuntimeError):
    """The loaded C extension is not the build a measurement asked for (one line, exit status 2, nothing written)."""


class PeerMismatch(CliError, RuntimeError):
    """A live peer's output (Moses' table, its extract) differs from ours inside a benchmark: the run stops (one
    line naming both files, exit status 2), since a time beside a peer that computed something else is no ratio."""
