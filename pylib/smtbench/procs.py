"""Child programs die with us. Every program this package starts (the aligner, decoders under ``tune``, KenLM's
and Moses' programs under the benchmarks, sort/gzip helpers, git) goes through :class:`Popen` or :func:`run`,
drop-ins for ``subprocess``'s, which

- ask the kernel to send the child SIGTERM when its parent dies, even by SIGKILL (``PR_SET_PDEATHSIG``, set in
  the child between fork and exec; it fires when the parent *thread* that forked exits, so start children from
  the main thread or from a thread that outlives them, as ``run`` does);
- keep every live child in a registry that :func:`stop_children` empties: the SIGTERM/SIGINT handler of
  ``smtbench.ioutil`` calls it before it removes our temporaries (so a child writes nothing after the removal),
  and so does normal or failing interpreter exit (``atexit``).

A child stays in our process group, so a ^C to the terminal's group or SLURM's kill of the job's group reaches it
directly as well."""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import time
from typing import Any, Sequence

PR_SET_PDEATHSIG = 1
_LIBC: Any = None
_LIVE: dict[int, "Popen"] = {}
STOP_GRACE_S = 5.0  # a stopped child gets this long to clean up after itself before SIGKILL


def _libc() -> Any:
    global _LIBC  # noqa: PLW0603 - loaded once in the parent, never in the forked child
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _LIBC = False
    return _LIBC


def _pdeathsig(sig: int, parent: int, then: Any):
    libc = _libc()

    def preexec() -> None:  # runs in the child after fork: no imports, no allocation-heavy work
        if libc:
            libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: the signal would never come
            os.kill(os.getpid(), sig)
        if then is not None:
            then()
    return preexec


class Popen(subprocess.Popen):
    """``subprocess.Popen`` that dies with its parent (see the module doc); ``death_signal`` is what the kernel
    sends it then (SIGTERM: our own children remove their temporaries; programs without a handler just end)."""

    def __init__(self, args: Any, *a: Any, death_signal: int = signal.SIGTERM, group: bool = False,
                 **kw: Any) -> None:
        """``group``: the child leads a process group of its own, and stopping it signals the whole group -- for
        a wrapper whose own children do the work (``bash -c 'a | b'``, ``/usr/bin/time CMD``): a signal to the
        wrapper alone would leave them running. (A ^C to the terminal's group then reaches it through us.)"""
        kw["preexec_fn"] = _pdeathsig(death_signal, os.getpid(), kw.get("preexec_fn"))
        if group:
            kw["process_group"] = 0
        self.group = group
        super().__init__(args, *a, **kw)
        _LIVE[self.pid] = self

    def poll(self) -> int | None:
        rc = super().poll()
        if rc is not None:
            _LIVE.pop(self.pid, None)
        return rc

    def wait(self, timeout: float | None = None) -> int:
        rc = super().wait(timeout)
        _LIVE.pop(self.pid, None)
        return rc

    def __exit__(self, *exc: Any) -> None:
        try:
            if exc[0] is not None and self.returncode is None:
                stop([self])  # leaving the block by an exception: the child must not outlive it
            super().__exit__(*exc)
        finally:
            _LIVE.pop(self.pid, None)


def run(args: Any, *, input: Any = None, capture_output: bool = False, timeout: float | None = None,
        check: bool = False, **kw: Any) -> subprocess.CompletedProcess:
    """``subprocess.run`` through :class:`Popen` (the child is stopped if we stop or the call raises)."""
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    with Popen(args, **kw) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:
            stop([proc])
            raise
        rc = proc.poll()
        assert rc is not None
    if check and rc:
        raise subprocess.CalledProcessError(rc, proc.args, output=out, stderr=err)
    return subprocess.CompletedProcess(proc.args, rc, out, err)


def _name(p: Popen) -> str:
    a = p.args
    first = a[0] if isinstance(a, Sequence) and not isinstance(a, (str, bytes)) and a else a
    return os.path.basename(os.fspath(first)) if isinstance(first, (str, bytes, os.PathLike)) else str(first)


def stop(procs: Sequence[Popen] | None = None, sig: int = signal.SIGTERM, grace: float = STOP_GRACE_S) -> list[str]:
    """Send ``sig`` to the live children (all registered ones by default), wait up to ``grace`` seconds for them,
    then SIGKILL what is left and reap it. Safe inside a signal handler that interrupted ``Popen.wait`` (reaps with
    ``os.waitpid`` itself, never through the Popen's lock). Returns 'name (pid N)' of every child it stopped."""
    todo = {p.pid: p for p in (procs if procs is not None else list(_LIVE.values())) if p.returncode is None}
    stopped = []

    def reap(block: bool) -> None:
        for pid, p in list(todo.items()):
            try:
                done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere already
                done, status = pid, 0
            if done == pid:
                with contextlib.suppress(ValueError):
                    p.returncode = os.waitstatus_to_exitcode(status)
                todo.pop(pid)
                _LIVE.pop(pid, None)

    reap(False)  # children that already ended (zombies) are reaped, not reported as stopped
    groups = [p.pid for p in todo.values() if getattr(p, "group", False)]
    for pid, p in list(todo.items()):
        try:
            (os.killpg if pid in groups else os.kill)(pid, sig)
            stopped.append(f"{_name(p)} (pid {pid}{', its process group' if pid in groups else ''})")
        except ProcessLookupError:
            pass

    deadline = time.monotonic() + grace
    while todo and time.monotonic() < deadline:
        reap(False)
        if todo:
            time.sleep(0.02)
    for pid in list(todo):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    reap(True)
    for pgid in groups:  # what of a group outlived its leader's grace
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    return stopped


def live() -> list[int]:
    """The pids of the registered children still running (tests)."""
    return [pid for pid, p in _LIVE.items() if p.returncode is None]


atexit.register(lambda: stop(grace=2.0))


class _SubprocessShim:
    """Stands for the ``subprocess`` module inside a library that starts its own child (eflomal's wrapper calls
    ``subprocess.run``): its ``run``/``Popen`` are ours, everything else the real module's."""
    run = staticmethod(run)
    Popen = Popen

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)


@contextlib.contextmanager
def adopted(module: Any):
    """While the block runs, ``module``'s ``subprocess`` global is :class:`_SubprocessShim`, so the children it
    starts die with us too."""
    old = module.__dict__.get("subprocess", subprocess)
    module.subprocess = _SubprocessShim()
    try:
        yield
    finally:
        module.subprocess = old
