"""The binarized phrase table (csrc/pbbin.c): ``build`` from Moses text tables once, ``load_binary`` into a
:class:`~smtbench.decode.model.PhraseModel` (memory-mapped, looked up on demand, static cache filled at load)."""
from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..native import check, ffi, lib

if TYPE_CHECKING:
    from ..decode.model import PhraseModel

#: --reordering: where the lexicalized reordering scores go
RO_MODES = {"none": int(lib.SB_PB_BIN_RO_NONE), "integrated": int(lib.SB_PB_BIN_RO_INTEGRATED),
            "separate": int(lib.SB_PB_BIN_RO_SEPARATE)}


class BinaryTableError(ValueError):
    """A table line the binarizer cannot read (file:line), or a file that is not a binarized table."""


def _feed(b, path: Path, fn) -> int:
    from ..decode.model import _chunks
    lines = 0
    for buf, first in _chunks(path):
        rc = fn(b, buf, len(buf), first)
        if rc == lib.SB_EFORMAT:
            msg = ffi.string(lib.sb_pb_binb_error_message(b)).decode()
            raise BinaryTableError(f"{path}:{int(lib.sb_pb_binb_error_line(b))}: {msg}")
        check(rc, f"reading {path}")
        lines += buf.count(b"\n")
    return lines


def build(phrase_table: str | os.PathLike[str], out: str | os.PathLike[str],
          reordering_table: str | os.PathLike[str] | None = None, reordering: str | None = None,
          compressed: bool = True) -> dict:
    """Binarize a Moses phrase table (+ reordering table, stored ``integrated`` in the targets or ``separate``;
    default: integrated when a reordering table is given, else none)."""
    if reordering is None:
        reordering = "integrated" if reordering_table is not None else "none"
    if reordering not in RO_MODES:
        raise ValueError(f"--reordering {reordering!r}: one of {', '.join(RO_MODES)}")
    if reordering != "none" and reordering_table is None:
        raise ValueError(f"--reordering {reordering} needs a reordering table")
    t0 = time.perf_counter()
    p = ffi.new("sb_pb_binb **")
    check(lib.sb_pb_binb_new(p), "binarizer")
    b = ffi.gc(p[0], lib.sb_pb_binb_free)
    _feed(b, Path(phrase_table), lib.sb_pb_binb_feed_phrases)
    if reordering != "none":
        _feed(b, Path(reordering_table), lib.sb_pb_binb_feed_reordering)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        check(lib.sb_pb_binb_write(b, str(tmp).encode(), int(compressed), RO_MODES[reordering]), f"writing {out}")
        from ..ioutil import publish
        publish(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    c = ffi.new("uint64_t[6]")
    lib.sb_pb_binb_counts(b, c)
    return {"phrase_pairs": int(c[0]), "source_phrases": int(c[1]), "reordering_lines": int(c[2]),
            "reordering_attached": int(c[3]), "bytes": int(c[4]), "max_phrase_length": int(c[5]),
            "compressed": compressed, "reordering": reordering, "seconds": round(time.perf_counter() - t0, 3)}


def load_binary(model: PhraseModel, path: Path, cache: int, need_reordering: bool) -> None:
    """Attach a binarized table to a model just created by sb_pb_new (instead of feeding the text tables)."""
    if cache < 0:
        raise ValueError(f"--cache {cache}: must be >= 0")
    if not path.is_file():
        raise BinaryTableError(f"{path}: no such binarized table (smtbench tm binarize)")
    rc = lib.sb_pb_load_binary(model._m, str(path).encode(), cache)
    if rc == lib.SB_EFORMAT:
        raise BinaryTableError(f"{path}: {ffi.string(lib.sb_pb_error_message(model._m)).decode()}")
    check(rc, f"loading {path}")
    mode = header_reordering(path)
    if need_reordering and mode == "none":
        raise BinaryTableError(f"{path}: built without reordering scores but {model.config.path} has a "
                               f"LexicalReordering feature (tm binarize --reordering-table ...)")


def header_reordering(path: Path) -> str:
    """The reordering storage a binarized table was built with (from its header)."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    mode = int.from_bytes(head[16:20], "little")
    return {v: k for k, v in RO_MODES.items()}.get(mode, "?")
