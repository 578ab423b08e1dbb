"""Memory estimates before big builds: refuse early, with a clear message, instead of being OOM-killed."""
from __future__ import annotations

import os


def mem_available_bytes() -> int:
    """MemAvailable from /proc/meminfo (falls back to total physical memory)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def require_memory(nbytes: int, what: str, headroom: float = 0.9) -> None:
    """Raise MemoryError before allocating when ``nbytes`` exceeds ``headroom`` x MemAvailable."""
    avail = mem_available_bytes()
    if nbytes > headroom * avail:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.2f} GiB but this machine has {avail / 2**30:.2f} GiB "
            f"available (limit {headroom:.0%} of it); use a smaller size or a bigger machine"
        )


def describe_exit(returncode: int) -> str:
    """Human words for a child's exit status; SIGKILL is almost always the kernel's OOM killer."""
    if returncode == -9 or returncode == 137:
        return "killed by SIGKILL (most likely the out-of-memory killer: check `dmesg` and lower the size)"
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"exit status {returncode}"
