"""Moses' text tables handed to the one C reader (csrc/pb/table_reader.c) in chunks of whole lines: the model
(decode/model.py) and the binarizer (tm/binarize.py) feed their tables through :func:`feed`."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from ..native import check, lib

_CHUNK = 1 << 22


def chunks(path: Path, is_dir_error: type[Exception] = ValueError) -> Iterator[tuple[bytes, int]]:
    """(whole lines as bytes, line number of the first) from a plain/.gz/.xz text file; a UTF-8 byte-order mark at
    its start is dropped (the line rule of ``ioutil.open_text``; the C reader checks the rest of it)."""
    if path.is_dir():
        raise is_dir_error(f"{path}: is a directory, expected a table file")
    from ..ioutil import open_binary
    lineno = 1
    rest = b""
    first = True
    with open_binary(path) as fh:
        while True:
            block = fh.read(_CHUNK)
            if not block:
                break
            if first:
                first = False
                block = block[3:] if block.startswith(b"\xef\xbb\xbf") else block
            block = rest + block
            cut = block.rfind(b"\n")
            if cut < 0:
                rest = block
                continue
            whole, rest = block[: cut + 1], block[cut + 1:]
            yield whole, lineno
            lineno += whole.count(b"\n")
    if rest:
        yield rest, lineno


def feed(path: Path, call: Callable[[bytes, int], int], error: Callable[[], tuple[int, str]],
         error_class: type[Exception]) -> int:
    """``call(chunk, first line number)`` over the table's chunks; a format error becomes ``error_class`` with the
    message ``path:line: reason`` (``error()`` gives the C side's line and reason). Returns the lines read."""
    lines = 0
    for buf, first in chunks(path, error_class):
        rc = call(buf, first)
        if rc == lib.SB_EFORMAT:
            line, msg = error()
            raise error_class(f"{path}:{line}: {msg}")
        check(rc, f"reading {path}")
        lines += buf.count(b"\n")
    return lines
