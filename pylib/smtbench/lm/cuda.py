"""The optional GPU path: ``csrc/cuda/*.cu`` compiled by nvcc into ``_cuda/libsmtbench_cuda.so`` and
loaded with cffi's ``dlopen`` (ABI mode) from the CFFI-BEGIN/END blocks of ``csrc/cuda/*.h``.

``smtbench build-cuda`` (or :func:`build`) compiles it; :func:`available` says whether it can run here
and, if not, why (no nvcc, not built, no driver, no device). Nothing else in smtbench needs it.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from .. import procs

PKG = Path(__file__).resolve().parents[1]  # the smtbench package
ROOT = PKG.parent.parent
CUDA_SRC = ROOT / "csrc" / "cuda"
LIB_DIR = PKG / "_cuda"
LIB = LIB_DIR / "libsmtbench_cuda.so"
CDEFS = LIB_DIR / "cdefs.h"
INFO = LIB_DIR / "buildinfo.json"
DEFAULT_ARCHS = ("80", "90")
SB_ECUDA = -20


class CudaUnavailable(RuntimeError):
    """The GPU path cannot run here; the message says why."""


class CudaError(RuntimeError):
    """A CUDA runtime call failed inside libsmtbench_cuda.so."""


def nvcc_path() -> str | None:
    return shutil.which(os.environ.get("NVCC", "nvcc"))


def _build_module() -> Any:
    """smtbench._build, for its CFFI-BEGIN/END block extraction (reused, not copied); importing it builds
    nothing and leaves _buildinfo.json alone."""
    from .. import _build
    return _build


def cuda_cdefs() -> str:
    """The CFFI blocks of csrc/cuda/*.h, as cffi's cdef() takes them."""
    b = _build_module()
    headers = [h for h in sorted(CUDA_SRC.glob("*.h")) if b._BLOCK.search(h.read_text())]
    return b.cdefs(headers)


def nvcc_flags(archs: tuple[str, ...] | list[str] = DEFAULT_ARCHS) -> list[str]:
    flags = ["-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC"]
    for a in archs:
        flags += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
    flags += shlex.split(os.environ.get("SMTBENCH_NVCCFLAGS", ""))
    return flags


def build(out: Path | str | None = None, archs: tuple[str, ...] | list[str] = DEFAULT_ARCHS,
          verbose: bool = False) -> Path:
    """Compile every csrc/cuda/*.cu into one shared library (atomically); returns its path."""
    nvcc = nvcc_path()
    if not nvcc:
        raise CudaUnavailable("nvcc not found on PATH (install the CUDA toolkit or set NVCC)")
    sources = sorted(CUDA_SRC.glob("*.cu"))
    if not sources:
        raise CudaUnavailable(f"no CUDA sources in {CUDA_SRC}")
    out = Path(out) if out else LIB
    out.parent.mkdir(parents=True, exist_ok=True)
    flags = nvcc_flags(archs)
    cdef_text = cuda_cdefs()
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        tmp_lib = Path(tmp) / out.name
        cmd = [nvcc, *flags, "-I", str(CUDA_SRC), "-o", str(tmp_lib), *map(str, sources)]
        res = procs.run(cmd, capture_output=not verbose, text=True)
        if res.returncode != 0:
            raise CudaError(f"nvcc failed (exit {res.returncode}): {' '.join(cmd)}\n{res.stderr or ''}")
        version = procs.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip()
        (Path(tmp) / "cdefs.h").write_text(cdef_text)
        info = {"nvcc": nvcc, "nvcc_version": version.splitlines()[-1] if version else "unknown",
                "flags": flags, "archs": list(archs), "sources": [str(s.relative_to(ROOT)) for s in sources],
                "command": " ".join(cmd)}
        (Path(tmp) / "buildinfo.json").write_text(json.dumps(info, indent=1) + "\n")
        os.replace(Path(tmp) / "cdefs.h", out.parent / "cdefs.h")
        os.replace(Path(tmp) / "buildinfo.json", out.parent / "buildinfo.json")
        os.replace(tmp_lib, out)
    _load.cache_clear()
    return out


@lru_cache(maxsize=1)
def _load() -> tuple[Any, Any]:
    from cffi import FFI

    if not LIB.exists():
        why = "run `smtbench build-cuda`" if nvcc_path() else "nvcc not found, so it cannot be built here"
        raise CudaUnavailable(f"{LIB.relative_to(ROOT)} is not built ({why})")
    ffi = FFI()
    ffi.cdef(CDEFS.read_text())
    try:
        lib = ffi.dlopen(str(LIB))
    except OSError as exc:  # e.g. libcudart or the driver library missing
        raise CudaUnavailable(f"cannot load {LIB.name}: {exc}") from exc
    return ffi, lib


def buildinfo() -> dict[str, Any]:
    return json.loads(INFO.read_text()) if INFO.exists() else {}


def library() -> tuple[Any, Any]:
    """(ffi, lib) of the loaded CUDA library; CudaUnavailable if it cannot be loaded."""
    return _load()


def available() -> tuple[bool, str]:
    """(True, device description) when a GPU can run the kernels, else (False, the reason)."""
    try:
        ffi, lib = _load()
    except CudaUnavailable as exc:
        return False, str(exc)
    count = ffi.new("int *")
    buf = ffi.new("char[]", 256)
    lib.sb_cuda_device_count(count, buf, 256)
    if count[0] < 1:
        return False, f"no CUDA device: {ffi.string(buf).decode(errors='replace') or 'none listed'}"
    major, minor = ffi.new("int *"), ffi.new("int *")
    if lib.sb_cuda_device_name(buf, 256, major, minor) != 0:
        return False, f"cannot query the CUDA device: {ffi.string(buf).decode(errors='replace')}"
    return True, f"{ffi.string(buf).decode()} (sm_{major[0]}{minor[0]})"


def require() -> tuple[Any, Any]:
    ok, why = available()
    if not ok:
        raise CudaUnavailable(why)
    return _load()


def check(code: int, context: str, m: Any = None) -> None:
    """SB_* codes → the exceptions of smtbench.native; SB_ECUDA → CudaError with the CUDA message."""
    if code == 0:
        return
    if code == SB_ECUDA:
        ffi, lib = _load()
        msg = "unknown CUDA error"
        if m is not None:
            buf = ffi.new("char[]", 256)
            lib.sb_cuda_last_error(m, buf, 256)
            msg = ffi.string(buf).decode(errors="replace")
        raise CudaError(f"{context}: CUDA error: {msg}")
    from ..native import check as native_check
    native_check(code, context)


def _int_list(fn_name: str) -> list[int]:
    ffi, lib = _load()
    n = ffi.new("int *")
    out = ffi.new("int[]", 64)
    check(getattr(lib, fn_name)(out, 64, n), fn_name)
    return [int(out[i]) for i in range(min(n[0], 64))]


def compiled_node_sizes() -> list[int]:
    return _int_list("sb_cuda_btree_node_sizes")


def compiled_orders() -> list[int]:
    return _int_list("sb_cuda_btree_orders")


class CudaBTreeLM:
    """A :class:`smtbench.lm.btree.BTreeLM` copied once to the GPU; queries run one warp each."""

    def __init__(self, cpu_model: Any):
        _load()  # the library's compiled sizes can be checked even where no GPU runs it
        k, order = cpu_model.node_size, cpu_model.order
        sizes, orders = compiled_node_sizes(), compiled_orders()
        if k not in sizes or order not in orders:
            raise ValueError(f"the CUDA B-tree is compiled for node sizes K in {sizes} and orders {orders}; "
                             f"got K={k}, order {order} (add it to SB_CUDA_NODE_SIZES / SB_CUDA_ORDERS in "
                             "csrc/cuda/btree.cu and the schema's glm_btree.gpu_node_sizes)")
        ffi, lib = require()
        data = cpu_model.data()
        out = ffi.new("sb_cuda_btree **")
        err = ffi.new("char[]", 256)
        rc = lib.sb_cuda_btree_create(ffi.from_buffer("uint8_t[]", data), len(data), order, k,
                                      len(cpu_model.vocab), out, err, 256)
        if rc == SB_ECUDA:
            raise CudaError(f"B-tree copy to the GPU: {ffi.string(err).decode(errors='replace')}")
        check(rc, f"B-tree copy to the GPU ({ffi.string(err).decode(errors='replace')})")
        self._ffi, self._lib = ffi, lib
        self._m = ffi.gc(out[0], lib.sb_cuda_btree_free)
        self.cpu = cpu_model
        self.order, self.node_size, self.nbytes = order, k, len(data)
        self.last_kernel_ms = 0.0
        self.last_total_ms = 0.0

    def query(self, queries: np.ndarray, with_len: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        q = self.cpu._check_queries(queries)
        ffi, lib = self._ffi, self._lib
        prob = np.empty(len(q), dtype=np.float32)
        length = np.empty(len(q), dtype=np.uint8) if with_len else None
        kms, tms = ffi.new("float *"), ffi.new("float *")
        rc = lib.sb_cuda_btree_query(self._m, ffi.cast("uint32_t *", ffi.from_buffer(q)), len(q),
                                     ffi.cast("float *", ffi.from_buffer(prob)),
                                     ffi.cast("uint8_t *", ffi.from_buffer(length)) if with_len else ffi.NULL,
                                     kms, tms)
        check(rc, f"CUDA B-tree query (word ids must be < {len(self.cpu.vocab)})", self._m)
        self.last_kernel_ms, self.last_total_ms = float(kms[0]), float(tms[0])
        return prob, length
