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


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w") as fh:
        fh.write(text)


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """Read plain, .gz or .xz text as UTF-8."""
    p = str(path)
    if p.endswith(".gz"):
        return gzip.open(p, "rt", encoding="utf-8")
    if p.endswith(".xz"):
        import lzma
        return lzma.open(p, "rt", encoding="utf-8")
    return open(p, encoding="utf-8")
