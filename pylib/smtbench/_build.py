"""cffi API-mode builder: every C file of csrc/'s folders (C_DIRS) compiles into one extension, ``smtbench._native``.

The public declarations of each kernel are the lines between ``/* CFFI-BEGIN */`` and
``/* CFFI-END */`` in its header. Flags are portable by default; ``SMTBENCH_NATIVE=1`` adds
``-march=native``. The exact flags and compiler are recorded in ``_buildinfo.json`` so that every
benchmark row can carry them.

Used by setup.py (``pip install -e .``) and directly: ``python pylib/smtbench/_build.py``
rebuilds the extension in place after editing C.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from cffi import FFI

PKG = Path(__file__).resolve().parent
ROOT = PKG.parent.parent
CSRC = ROOT / "csrc"
#: the C folders: csrc/ and its wings (lm/, tm/, hash/, tune/, util/, the phrase-based core pb/), all but cuda/ (nvcc's,
#: lm/cuda.py); every #include "x.h" is relative to csrc/
C_DIRS = (CSRC, *sorted(d for d in CSRC.iterdir() if d.is_dir() and d.name != "cuda"))
_BLOCK = re.compile(r"/\*\s*CFFI-BEGIN\s*\*/(.*?)/\*\s*CFFI-END\s*\*/", re.S)


def compile_flags() -> list[str]:
    flags = ["-std=c11", "-O3", "-g", "-fno-strict-aliasing", "-Wall", "-Wextra",
             "-Wno-unused-parameter", "-Wno-unused-function", "-pthread"]
    if os.environ.get("SMTBENCH_NATIVE", "0") not in ("", "0"):
        flags.append("-march=native")
    flags += shlex.split(os.environ.get("SMTBENCH_CFLAGS", ""))
    return flags


_INCLUDE = re.compile(r'^#include "([^"]+\.h)"', re.M)


def headers() -> list[Path]:
    """Headers with a CFFI block, each after the headers it includes (so its block may use their types); ties
    by name."""
    by_name = {p.relative_to(CSRC).as_posix(): p for d in C_DIRS for p in sorted(d.glob("*.h"))}
    order: list[Path] = []
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        if state.get(name) == 2 or name not in by_name:
            return
        if state.get(name) == 1:
            raise RuntimeError(f"csrc: #include cycle through {name}")
        state[name] = 1
        for dep in sorted(_INCLUDE.findall(by_name[name].read_text())):
            visit(dep)
        state[name] = 2
        order.append(by_name[name])

    for name in sorted(by_name, key=lambda n: (n != "util/common.h", n)):
        visit(name)
    return [h for h in order if _BLOCK.search(h.read_text())]


def cdefs(paths: list[Path]) -> str:
    return "\n".join(f"/* {p.name} */\n" + "\n".join(_BLOCK.findall(p.read_text())) for p in paths)


def _compiler_version(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True)
        return out.stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def make_builder(absolute: bool = False, info_dir: Path = PKG) -> FFI:
    """The cffi builder; ``info_dir`` gets ``_buildinfo.json`` (another folder for a build outside the package)."""
    ffi = FFI()
    hs = headers()
    ffi.cdef(cdefs(hs))
    flags = compile_flags()
    # setuptools wants paths relative to the project; ffi.compile() changes directory, so absolute.
    sources = sorted(str(p if absolute else p.relative_to(ROOT)) for d in C_DIRS for p in d.glob("*.c"))
    flag_str = " ".join(flags).replace('"', "")
    ffi.set_source(
        "smtbench._native",
        "\n".join(f'#include "{h.relative_to(CSRC).as_posix()}"' for h in hs),
        sources=sources,
        include_dirs=[str(CSRC)],
        extra_compile_args=flags,
        define_macros=[("SB_CFLAGS", f'"{flag_str}"')],
        libraries=["m", "pthread"],
        extra_link_args=shlex.split(os.environ.get("SMTBENCH_LDFLAGS", "")),
    )
    cc = os.environ.get("CC", "cc")
    info = {"cc": cc, "compiler": _compiler_version(cc), "cflags": flags,
            "native": "-march=native" in flags, "sources": sources}
    (Path(info_dir) / "_buildinfo.json").write_text(json.dumps(info, indent=1) + "\n")
    return ffi


if __name__ == "__main__" and "--outdir" in sys.argv:
    # A build outside the package (tests/test_counts.py: a build with other SMTBENCH_CFLAGS): DIR/smtbench/_native*.so
    # beside its own _buildinfo.json; the package's extension is left alone.
    out = Path(sys.argv[sys.argv.index("--outdir") + 1]).resolve()
    (out / "smtbench").mkdir(parents=True, exist_ok=True)
    print(make_builder(absolute=True, info_dir=out / "smtbench").compile(tmpdir=str(out), verbose="-v" in sys.argv))
elif __name__ == "__main__":
    # In-place rebuild: compile into pylib/ so the editable install picks it up.
    built = Path(make_builder(absolute=True).compile(tmpdir=str(ROOT / "pylib"), verbose="-v" in sys.argv))
    # exactly one extension file may remain, or Python could import a stale one
    for other in PKG.glob("_native*.so"):
        if other.resolve() != built.resolve():
            other.unlink()
    print(built)
elif __name__ == "__cffi__":  # setup.py's cffi_modules executes this file under that name
    ffibuilder = make_builder()
# imported as smtbench._build (e.g. by cuda.py for its header parsing): nothing is built or rewritten
