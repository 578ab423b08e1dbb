"""Progress on stderr for long steps (tqdm): counters over lines, and a heartbeat for work done by another
program (eflomal) whose progress we cannot read. Off under ``SMTBENCH_PROGRESS=0`` or ``enabled=False``;
redrawn at most every second on a terminal and every 30 s into a log file; shown only once a step has run for a
second on a terminal, 5 s into a file, so quick steps (and a bad input refused at once) leave only their own lines."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Iterator


def enabled(default: bool = True) -> bool:
    return default and os.environ.get("SMTBENCH_PROGRESS", "1") != "0"


def bar(desc: str, total: int | None = None, unit: str = "it", on: bool = True):
    """A tqdm bar on stderr (a disabled one when ``on`` is false)."""
    from tqdm import tqdm
    tty = sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr, disable=not enabled(on),
                mininterval=1.0 if tty else 30.0, delay=1.0 if tty else 5.0, dynamic_ncols=tty, leave=True)


@contextlib.contextmanager
def heartbeat(desc: str, on: bool = True) -> Iterator[None]:
    """Elapsed time on stderr while the block runs (for work another program does)."""
    b = bar(desc, unit="s", on=on)
    if b.disable:
        yield
        b.close()
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(1.0):
            b.update(1)

    t = threading.Thread(target=beat, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()
        b.close()
