"""smtbench's cache: derived files that are expensive to remake and safe to delete (today: decompressed copies of
.gz/.xz ARPA models, which the kenlm module cannot read compressed, made by the derivation scorer that `bench
decode` and `decode rescore` use), keyed by the content hash of their source.

Root: ``$SMTBENCH_CACHE`` if set, else ``$XDG_CACHE_HOME/smtbench``, else ``~/.cache/smtbench``.
`smtbench cache` shows what it holds; `smtbench cache clean` deletes it."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def cache_root() -> Path:
    env = os.environ.get("SMTBENCH_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "smtbench"


def usage(root: Path | None = None) -> dict[str, tuple[int, int]]:
    """{kind (top-level folder): (files, bytes)}."""
    root = root or cache_root()
    out: dict[str, tuple[int, int]] = {}
    if not root.is_dir():
        return out
    for kind in sorted(p for p in root.iterdir() if p.is_dir()):
        files = [f for f in kind.rglob("*") if f.is_file()]
        out[kind.name] = (len(files), sum(f.stat().st_size for f in files))
    return out


def clean(root: Path | None = None) -> tuple[int, int]:
    """Delete every cached file (the root's folders); (files, bytes) removed. Refuses a root that holds anything
    but the cache's own folders, so a mistyped SMTBENCH_CACHE cannot delete unrelated files."""
    root = root or cache_root()
    if not root.is_dir():
        return 0, 0
    known = {"arpa"}
    foreign = [p.name for p in root.iterdir() if p.name not in known]
    if foreign:
        raise ValueError(f"{root}: holds {', '.join(sorted(foreign)[:5])}, which smtbench did not write; "
                         "not cleaning it (is SMTBENCH_CACHE right?)")
    files = nbytes = 0
    for kind in known:
        d = root / kind
        if d.is_dir():
            for f in d.rglob("*"):
                if f.is_file():
                    files += 1
                    nbytes += f.stat().st_size
            shutil.rmtree(d)
    return files, nbytes
