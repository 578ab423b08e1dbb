"""ioutil: outputs appear whole, with the permissions a plain open() would give, or not at all."""
from __future__ import annotations

import gzip
import os
import stat

import pytest

from smtbench.ioutil import atomic_open, atomic_write_text


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_atomic_output_has_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.txt", "x\n")
        with atomic_open(tmp_path / "b.txt.gz") as fh:
            fh.write("y\n")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.txt") == 0o644
    assert _mode(tmp_path / "b.txt.gz") == 0o644
    assert gzip.open(tmp_path / "b.txt.gz", "rt").read() == "y\n"


def test_atomic_output_left_out_on_error(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_open(tmp_path / "c.txt") as fh:
            fh.write("partial")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_a_temp_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    """SIGKILL leaves a writer's hidden temp beside the output; the next write of that output on this host removes
    it, but never the temp of a live writer or of another host (a shared file system)."""
    import signal
    import subprocess
    import sys

    from smtbench.ioutil import _HOST

    target = tmp_path / "out.txt"
    code = ("import sys, time\nfrom smtbench.ioutil import atomic_open\n"
            "with atomic_open(sys.argv[1]) as fh:\n    fh.write('partial'); fh.flush(); print('ready', flush=True); "
            "time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    left = [x.name for x in tmp_path.iterdir() if x.name.endswith(".tmp")]
    assert len(left) == 1 and not target.exists()
    live = tmp_path / f".out.txt.{_HOST}.{os.getpid()}.abc.tmp"
    other = tmp_path / f".out.txt.otherhost.{p.pid}.abc.tmp"
    live.write_text("x"), other.write_text("x")
    atomic_write_text(target, "whole\n")
    assert target.read_text() == "whole\n"
    assert sorted(x.name for x in tmp_path.iterdir() if x.name.endswith(".tmp")) == sorted([live.name, other.name])
