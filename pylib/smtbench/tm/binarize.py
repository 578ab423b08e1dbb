"""The binarized phrase table (csrc/pb/bin_format.h; written by pb/bin_write.c, read by pb/bin_read.c): ``build``
from Moses text tables once; the model memory-maps it (:func:`smtbench.decode.model.load_binary`: looked up on
demand, static cache filled at load) and checks it against the ini's tables with :func:`provenance`,
:func:`check_identity` and :func:`header_reordering`."""
from __future__ import annotations

import os
import time
from pathlib import Path

from ..native import check, ffi, lib

#: --reordering: where the lexicalized reordering scores go
#: pb/bin_format.h SB_PB_BIN_VERSION (the header's format version)
FORMAT_VERSION = 2

RO_MODES = {"none": int(lib.SB_PB_BIN_RO_NONE), "integrated": int(lib.SB_PB_BIN_RO_INTEGRATED),
            "separate": int(lib.SB_PB_BIN_RO_SEPARATE)}


class BinaryTableError(ValueError):
    """A table line the binarizer cannot read (file:line), or a file that is not a binarized table."""


#: the header's layout (pb/bin_format.h sb_pb_bin_header): where the provenance section's offset and length are
_META_AT = 160
_FINGER_BLOCK = 1 << 20


def fingerprint(path: str | os.PathLike[str]) -> dict:
    """A text table's identity, cheap enough to check at every load: its size and a BLAKE2b of its first and last
    MiB (as stored, compressed or not) -- a table edited, regenerated or swapped changes it."""
    import hashlib
    p = Path(path)
    size = p.stat().st_size
    h = hashlib.blake2b(digest_size=16)
    h.update(str(size).encode())
    with open(p, "rb") as fh:
        h.update(fh.read(_FINGER_BLOCK))
        if size > _FINGER_BLOCK:
            fh.seek(max(_FINGER_BLOCK, size - _FINGER_BLOCK))
            h.update(fh.read(_FINGER_BLOCK))
    return {"name": p.name, "bytes": size, "fingerprint": h.hexdigest()}


def provenance(path: str | os.PathLike[str]) -> dict:
    """The provenance a binarized table records (read after sb_pb_bin_open verified its checksums and ranges):
    {"phrase_table": {"name", "bytes", "fingerprint"}, "reordering_table": {...} or None, ...}."""
    import json
    with open(path, "rb") as fh:
        head = fh.read(_META_AT + 16)
        off = int.from_bytes(head[_META_AT:_META_AT + 8], "little")
        n = int.from_bytes(head[_META_AT + 8:_META_AT + 16], "little")
        fh.seek(off)
        raw = fh.read(n)
    try:
        meta = json.loads(raw.decode("utf-8")) if n else {}
        ok = isinstance(meta, dict) and all(
            meta.get(k) is None or (isinstance(meta[k], dict) and isinstance(meta[k].get("name"), str)
                                    and isinstance(meta[k].get("bytes"), int)
                                    and isinstance(meta[k].get("fingerprint"), str))
            for k in ("phrase_table", "reordering_table"))
    except ValueError:
        ok = False
    if not ok:
        raise BinaryTableError(f"{path}: corrupted provenance section")
    return meta


def check_identity(path: Path, meta: dict, key: str, table: Path, ini) -> None:
    """The text table the ini names must be the one the binary was built from (when the text table is present:
    a binary may be deployed without it)."""
    built = meta.get(key)
    if built is None or not table.is_file():
        return
    now = fingerprint(table)
    if (now["bytes"], now["fingerprint"]) != (built["bytes"], built["fingerprint"]):
        raise BinaryTableError(
            f"{path}: built from another {key.replace('_', ' ')}: {built['name']} ({built['bytes']} bytes, "
            f"fingerprint {built['fingerprint'][:12]}), but {ini} names {table} ({now['bytes']} bytes, fingerprint "
            f"{now['fingerprint'][:12]}); rebuild it with smtbench tm binarize")


def _feed(b, path: Path, fn) -> int:
    from .tables import feed
    return feed(path, lambda buf, first: fn(b, buf, len(buf), first),
                lambda: (int(lib.sb_pb_binb_error_line(b)), ffi.string(lib.sb_pb_binb_error_message(b)).decode()),
                BinaryTableError)


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
    import json
    meta = {"format": FORMAT_VERSION, "phrase_table": fingerprint(phrase_table),
            "reordering_table": fingerprint(reordering_table) if reordering != "none" else None,
            "reordering": reordering, "compressed": bool(compressed)}
    text = json.dumps(meta, sort_keys=True).encode()
    check(lib.sb_pb_binb_set_meta(b, text, len(text)), "binarizer")
    _feed(b, Path(phrase_table), lib.sb_pb_binb_feed_phrases)
    if reordering != "none":
        # an empty reordering table is a table without scores: index the pairs anyway (no line would)
        check(lib.sb_pb_binb_feed_reordering(b, b"", 0, 1), "binarizer")
        _feed(b, Path(reordering_table), lib.sb_pb_binb_feed_reordering)
    from ..ioutil import atomic_path, run_interruptible
    with atomic_path(out) as tmp:
        # one long C call: in a worker thread, so SIGTERM/SIGINT are handled (and the temporary file removed) at once
        check(run_interruptible(lib.sb_pb_binb_write, b, str(tmp).encode(), int(compressed), RO_MODES[reordering]),
              f"writing {out}")
    c = ffi.new("uint64_t[6]")
    lib.sb_pb_binb_counts(b, c)
    return {"phrase_pairs": int(c[0]), "source_phrases": int(c[1]), "reordering_lines": int(c[2]),
            "reordering_attached": int(c[3]), "bytes": int(c[4]), "max_phrase_length": int(c[5]),
            "compressed": compressed, "reordering": reordering, "seconds": round(time.perf_counter() - t0, 3)}


def header_reordering(path: Path) -> str:
    """The reordering storage a binarized table was built with (from its header)."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    mode = int.from_bytes(head[16:20], "little")
    return {v: k for k, v in RO_MODES.items()}.get(mode, "?")
