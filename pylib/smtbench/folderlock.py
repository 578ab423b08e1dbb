"""One run per output folder: `tm train`, `tune` and `data prepare` hold an OS file lock (``flock``) on
``FOLDER/.smtbench.lock`` while they write there, so a second run on the same folder is refused in one line naming
the holder (host and PID, which the holder writes into the lock file). The kernel releases the lock when its holder
dies (SIGKILL included), so a stale lock file never blocks a later run; the file itself stays (removing it would
let two runs lock two different inodes of one name). The descriptor is not inherited by child processes."""
from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from typing import Iterator

LOCK_NAME = ".smtbench.lock"


class FolderBusyError(ValueError):
    """The output folder is being written by another run (one line: the folder, the holder's host and PID)."""


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError):
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        if text:
            return text
    return "holder unknown"


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str], what: str, part: str | None = None,
                option: str | None = None) -> Iterator[None]:
    """Create ``folder`` if needed and hold its lock for the block; ``what`` names the command in the refusal
    (``tm train``). Raises :class:`FolderBusyError` if another live process holds it. ``part``: lock one part of
    the folder only (``.smtbench.<part>.lock``: `tm train` locks each step it runs, so the workflow's jobs of
    different steps on one folder run side by side while two runs of one step never do). ``option``: the option that
    named the folder (``--workdir``), named in the one-line refusal of a folder that is a file."""
    from .ioutil import OutputPathError
    d = os.fspath(folder)
    if os.path.realpath(d) == os.path.realpath(os.sep):  # its steps' files would be strewn over the root
        raise OutputPathError(f"{f'{option} ' if option else ''}{d}: the file system's root; give a folder of its own")
    try:
        os.makedirs(d, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        if os.path.lexists(d):
            named = f"{option} {d}" if option else d
            raise OutputPathError(f"{named}: not a folder (a file of that name exists; give a folder)") from None
        raise OutputPathError(f"{d}: cannot create the folder, a parent is not a directory") from None
    except OSError as exc:
        raise OutputPathError(f"{d}: cannot create the folder: {exc.strerror}") from None
    path = os.path.join(d, LOCK_NAME if part is None else f".smtbench.{part}.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot create the folder's lock file: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusyError(f"{d}: in use by another {what}{f' (its {part} step)' if part else ''} "
                                  f"({_holder(fd)}); wait for it to finish, stop it, or use another folder") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"host {socket.gethostname()} pid {os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
