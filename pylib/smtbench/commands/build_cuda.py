"""`smtbench build-cuda`: compile csrc/cuda/*.cu with nvcc into pylib/smtbench/_cuda/libsmtbench_cuda.so."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "build-cuda", help="compile the optional GPU kernels (csrc/cuda/*.cu) with nvcc; loaded via ffi.dlopen")
    p.add_argument("--archs", default="80,90",
                   help="compute capabilities for -gencode (default 80,90 = sm_80 and sm_90)")
    p.add_argument("--out", help="library path (default pylib/smtbench/_cuda/libsmtbench_cuda.so)")
    p.add_argument("--if-nvcc", action="store_true",
                   help="succeed quietly (exit 0, reason on stderr) when nvcc is missing")
    p.add_argument("--check", action="store_true", help="afterwards, say whether a GPU can run it")
    p.add_argument("-v", "--verbose", action="store_true", help="show nvcc's output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from ..lm import cuda
    from ..errors import CliError

    archs = [a.strip() for a in args.archs.split(",") if a.strip()]
    if not archs or not all(a.isdigit() for a in archs):
        raise ValueError(f"--archs must be a comma list of compute capabilities like 80,90, got {args.archs!r}")
    if cuda.nvcc_path() is None:
        msg = "nvcc not found on PATH: the GPU kernels are not built (everything else works without them)"
        if args.if_nvcc:
            print(f"smtbench build-cuda: {msg}", file=sys.stderr)
            return 0
        raise CliError(msg)
    try:
        path = cuda.build(args.out, archs, verbose=args.verbose)
    except (cuda.CudaUnavailable, cuda.CudaError) as exc:
        raise CliError(str(exc)) from exc
    info = cuda.buildinfo() if not args.out else {}
    out = {"library": str(path), **{k: info[k] for k in ("nvcc_version", "flags") if k in info}}
    if args.check:
        ok, why = cuda.available()
        out["gpu"] = {"available": ok, "detail": why}
    print(json.dumps(out))
    return 0
