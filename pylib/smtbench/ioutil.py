"""Output files appear whole or not at all: write to a temporary file beside the target, then rename."""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (os.umask alone must set it, which
    races with files other threads create meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Rename a finished temporary file over ``target`` with the permissions a plain ``open`` would have
    given it (mkstemp creates files 0600)."""
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, target)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; rename it over ``path`` only if the block succeeds.
    A ``.gz`` path is gzip-compressed. On any exception the temporary file is removed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    binary = "b" in mode
    _CLEANUP[id(tmp)] = tmp
    try:
        raw = os.fdopen(fd, "wb")
        if target.suffix == ".gz":
            gz = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0)
            fh: IO = gz if binary else io.TextIOWrapper(gz, encoding=encoding, newline="\n")
        else:
            fh = raw if binary else io.TextIOWrapper(raw, encoding=encoding, newline="\n")
        with fh:
            yield fh
            if fh is not raw:
                fh.flush()
        if target.suffix == ".gz":
            raw.close()
        publish(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        _CLEANUP.pop(id(tmp), None)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """A temporary path beside ``path`` for a writer that wants a name (a C kernel, an external program, a
    binary stream of our own); renamed over ``path`` if the block succeeds, removed otherwise."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    _CLEANUP[id(tmp)] = tmp
    try:
        yield tmp
        publish(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        _CLEANUP.pop(id(tmp), None)


@contextlib.contextmanager
def output_or_stdout(path: str | os.PathLike[str] | None) -> Iterator[IO[str]]:
    """``atomic_open(path)``, or standard output when no path is given (benchmark rows)."""
    if path:
        with atomic_open(path, "w") as fh:
            yield fh
    else:
        import sys
        yield sys.stdout


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w") as fh:
        fh.write(text)


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Read plain, .gz or .xz bytes."""
    p = str(path)
    if p.endswith(".gz"):
        return gzip.open(p, "rb")
    if p.endswith(".xz"):
        import lzma
        return lzma.open(p, "rb")
    return open(p, "rb")


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """Read plain, .gz or .xz text as UTF-8."""
    p = str(path)
    if p.endswith(".gz"):
        return gzip.open(p, "rt", encoding="utf-8")
    if p.endswith(".xz"):
        import lzma
        return lzma.open(p, "rt", encoding="utf-8")
    return open(p, encoding="utf-8")


# ---------------------------------------------------------------- cleanup on SIGTERM / SIGINT
# Temporary files and run folders register here while they exist; the CLI installs handlers that remove them
# and exit at once (SLURM and Snakemake cancel jobs with SIGTERM, which Python's default would not clean up).
_CLEANUP: dict[int, str] = {}


@contextlib.contextmanager
def removed_on_signal(path: str | os.PathLike[str]) -> Iterator[None]:
    key = id(path)
    _CLEANUP[key] = os.fspath(path)
    try:
        yield
    finally:
        _CLEANUP.pop(key, None)


def _on_signal(signum, frame) -> None:  # pragma: no cover - exercised in a subprocess by the tests
    import shutil
    import sys
    for p in list(_CLEANUP.values()):
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(p)
    with contextlib.suppress(Exception):
        sys.stderr.write(f"smtbench: stopped by signal {signum}; temporary files removed\n")
        sys.stderr.flush()
    os._exit(128 + signum)


def install_signal_cleanup() -> None:
    """SIGTERM and SIGINT: remove every registered temporary path, exit 128 + the signal (main thread only)."""
    import signal
    import threading
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _on_signal)


def run_interruptible(fn, *args, **kwargs):
    """Run ``fn`` (long C calls, which release the GIL) in a worker thread so the main thread keeps handling
    signals within a fraction of a second; returns its result or re-raises its exception."""
    import threading
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="smtbench-work", daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.2)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("result")


def remove_stale_runs(base: str | os.PathLike[str], prefix: str) -> list[str]:
    """Remove run folders ``<prefix><pid>.*`` under ``base`` whose process is gone (killed with SIGKILL, or a
    crash); returns what was removed."""
    import shutil
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            if not (entry.is_dir(follow_symlinks=False) and entry.name.startswith(prefix)):
                continue
            pid_text = entry.name[len(prefix):].split(".", 1)[0]
            if not pid_text.isdigit():
                continue
            pid = int(pid_text)
            try:
                os.kill(pid, 0)
                alive = True
            except ProcessLookupError:
                alive = False
            except PermissionError:
                alive = True
            if not alive:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed
