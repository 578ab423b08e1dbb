"""Machine facts recorded with every benchmark row: CPU, caches, cores, memory, huge pages, load,
compiler and flags, git sha, GPU (or why there is none)."""
from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from .native import buildinfo
from . import procs

ROOT = Path(__file__).resolve().parents[2]


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_model() -> str:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def caches() -> dict[str, str]:
    """{'L1d': '48K', 'L2': '2048K', ...} for cpu0 from sysfs."""
    out: dict[str, str] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        level, kind, size = _read(idx / "level"), _read(idx / "type"), _read(idx / "size")
        if level and kind and size:
            name = f"L{level}" + ({"Data": "d", "Instruction": "i"}.get(kind, ""))
            out[name] = size
    return out


def huge_page_mode() -> str | None:
    text = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    if text and "[" in text:
        return text.split("[", 1)[1].split("]", 1)[0]
    return text


def git_sha() -> str:
    try:
        sha = procs.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                        capture_output=True, text=True, check=True).stdout.strip()
        dirty = procs.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                          capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def gpu() -> dict[str, Any]:
    """The GPU as nvidia-smi sees it, or the reason there is none."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return {"available": False, "reason": "nvidia-smi not found (no NVIDIA driver on this machine)"}
    try:
        out = procs.run([smi, "--query-gpu=name,memory.total,driver_version",
                         "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"available": False, "reason": f"nvidia-smi failed: {exc}"}
    if out.returncode != 0 or not out.stdout.strip():
        return {"available": False, "reason": f"nvidia-smi: {out.stderr.strip() or 'no GPU listed'}"}
    name, mem, driver = [x.strip() for x in out.stdout.splitlines()[0].split(",")]
    return {"available": True, "name": name, "memory": mem, "driver": driver}


def facts(with_gpu: bool = True) -> dict[str, Any]:
    mem_kb = 0
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    info = buildinfo()
    return {
        "hostname": socket.gethostname(),
        "cpu": cpu_model(),
        "arch": platform.machine(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "caches": caches(),
        "memory_gib": round(mem_kb / 2**20, 2),
        "huge_pages": huge_page_mode(),
        "loadavg": list(os.getloadavg()),
        "compiler": info.get("compiler", "unknown"),
        "cflags": info.get("cflags_compiled", ""),
        "native": bool(info.get("native", False)),
        "git_sha": git_sha(),
        "python": platform.python_version(),
        "gpu": gpu() if with_gpu else {"available": False, "reason": "not probed"},
    }


def anon_huge_mib() -> float | None:
    """MiB of this process's anonymous memory on transparent huge pages now (/proc/self/smaps_rollup), or None.
    A madvise(MADV_HUGEPAGE) is a request: on a fragmented machine the kernel grants fewer, and the lookups of a
    big table then pay page walks (our LM and hash rows differ by up to 2x between runs with and without)."""
    for line in (_read("/proc/self/smaps_rollup") or "").splitlines():
        if line.startswith("AnonHugePages:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


class HugePages:
    """How much of what a block builds lands on transparent huge pages: the growth of this process's
    AnonHugePages across the block (``with HugePages("what", nbytes) as h: build()``, then ``h.mib`` / ``h.share``).
    A big allocation that asked for huge pages and got under 90% of them is reported on stderr: its timings are
    not comparable with a run that had them (the machine's free memory is fragmented)."""

    def __init__(self, what: str, nbytes: int, requested: bool = True):
        self.what, self.nbytes, self.requested = what, nbytes, requested
        self.mib: float | None = None
        self.share: float | None = None

    def __enter__(self) -> "HugePages":
        self._before = anon_huge_mib()
        return self

    def __exit__(self, *exc: object) -> None:
        after = anon_huge_mib()
        if self._before is None or after is None or exc[0] is not None:
            return
        self.mib = round(after - self._before, 1)
        want = self.nbytes / 2**20
        self.share = round(min(1.0, self.mib / want), 4) if want else None
        if self.requested and want >= 64 and self.share is not None and self.share < 0.9:
            print(f"warning: {self.what}: only {self.mib:.0f} of {want:.0f} MiB on transparent huge pages; its timings "
                  "are not comparable with a run that had them (free memory is fragmented: "
                  "`sync; echo 3 > /proc/sys/vm/drop_caches; echo 1 > /proc/sys/vm/compact_memory` as root helps)",
                  file=sys.stderr)


def row_fields(f: dict[str, Any]) -> dict[str, Any]:
    """Flat columns for a tidy CSV row (the full JSON goes beside the results)."""
    return {
        "machine_host": f["hostname"], "machine_cpu": f["cpu"], "machine_cores": f["cores"],
        "machine_l2": f["caches"].get("L2", ""), "machine_l3": f["caches"].get("L3", ""),
        "machine_mem_gib": f["memory_gib"], "machine_huge_pages": f["huge_pages"],
        "machine_load1": round(os.getloadavg()[0], 2), "machine_compiler": f["compiler"],
        "machine_cflags": f["cflags"], "machine_git_sha": f["git_sha"],
        "process_anon_huge_mib": anon_huge_mib(),
    }


def main_json() -> str:
    return json.dumps(facts(), indent=1)
