"""Access to the compiled C kernels and the error-code → exception mapping."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

try:
    from smtbench._native import ffi, lib  # type: ignore[attr-defined]
except ImportError as exc:  # pragma: no cover - exercised only on a broken install
    raise ImportError(
        "smtbench's C extension is not built: run `pip install -e .` in the repository "
        f"(or `python pylib/smtbench/_build.py`) ({exc})"
    ) from exc


class NativeError(RuntimeError):
    """A C kernel returned an error code."""

    def __init__(self, code: int, context: str):
        self.code = code
        super().__init__(f"{context}: {ffi.string(lib.sb_strerror(code)).decode()} (code {code})")


class NativeValueError(NativeError, ValueError):
    pass


class NativeMemoryError(NativeError, MemoryError):
    pass


class NativeFormatError(NativeError, ValueError):
    pass


class NativeIOError(NativeError, OSError):
    pass


class NativeThreadError(NativeError):
    pass


class NativeNotFoundError(NativeError, LookupError):
    pass


class NativeUnsupportedError(NativeError):
    pass


_BY_CODE: dict[int, type[NativeError]] = {
    lib.SB_EINVAL: NativeValueError,
    lib.SB_ENOMEM: NativeMemoryError,
    lib.SB_EFULL: NativeValueError,
    lib.SB_EFORMAT: NativeFormatError,
    lib.SB_ETHREAD: NativeThreadError,
    lib.SB_ENOTFOUND: NativeNotFoundError,
    lib.SB_EIO: NativeIOError,
    lib.SB_EUNSUPPORTED: NativeUnsupportedError,
}


def check(code: int, context: str, *, errno_reason: bool = False) -> None:
    """Raise the exception for a non-zero status code from C. ``errno_reason``: the call does its I/O on the calling
    thread and returns SB_EIO right after the system call that failed, so the errno it left (cffi keeps it per
    thread, from the last call: read here, right after it) says why - added to an I/O error's line. Not for calls
    whose I/O runs on worker threads or that return SB_EIO without a failed system call (a short read): their
    errno would name another call's failure."""
    if code != lib.SB_OK:
        errno = ffi.errno if errno_reason and code == lib.SB_EIO else 0
        if errno:
            context = f"{context} ({os.strerror(errno)})"
        raise _BY_CODE.get(code, NativeError)(code, context)


def buildinfo() -> dict[str, Any]:
    path = Path(__file__).with_name("_buildinfo.json")
    info: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    info["cflags_compiled"] = ffi.string(lib.sb_build_flags()).decode()
    return info


def as_ptr(ctype: str, array: Any) -> Any:
    """A cffi pointer into a contiguous numpy array (no copy)."""
    return ffi.cast(ctype, ffi.from_buffer(array))
