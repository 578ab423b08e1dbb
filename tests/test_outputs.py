"""Outputs (ioutil.atomic_open / atomic_path): a regular file or new path is replaced by temp + rename, a FIFO or
``-`` written through, a symlink followed; a directory, a path below a file, or one file named by two outputs is a
one-line error. Special files are a FIFO and symlinks in tmp_path, never a real device."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest

from smtbench.ioutil import OutputPathError, atomic_open, atomic_path, check_distinct_outputs


def _read_fifo(path, box):
    with open(path, "rb") as fh:
        box["data"] = fh.read()


@pytest.mark.parametrize("how", ["atomic_open", "atomic_path"])
def test_fifo_is_written_through_not_replaced(tmp_path, how):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    box: dict = {}
    t = threading.Thread(target=_read_fifo, args=(fifo, box))
    t.start()
    if how == "atomic_open":
        with atomic_open(fifo) as fh:
            fh.write("hello\n")
    else:
        with atomic_path(fifo) as name, open(name, "wb") as fh:
            assert name == str(fifo)
            fh.write(b"hello\n")
    t.join(10)
    assert box["data"] == b"hello\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]


@pytest.mark.parametrize("dangling", [False, True])
def test_symlink_is_followed(tmp_path, dangling):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "target.txt"
    if not dangling:
        target.write_text("old\n")
        os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with atomic_open(link) as fh:
        fh.write("new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    if not dangling:
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # the replaced file's permissions are kept
    assert sorted(p.name for p in real_dir.iterdir()) == ["target.txt"]


def test_directory_and_below_a_file_are_one_line_errors(tmp_path):
    with pytest.raises(OutputPathError, match="is a directory"):
        with atomic_open(tmp_path) as fh:
            fh.write("x")
    f = tmp_path / "file"
    f.write_text("keep\n")
    with pytest.raises(OutputPathError, match="a parent is not a directory"):
        with atomic_path(f / "x"):
            pass
    assert f.read_text() == "keep\n"


def test_same_file_twice_refused(tmp_path):
    a = tmp_path / "a.txt"
    link = tmp_path / "l.txt"
    link.symlink_to(a)
    with pytest.raises(OutputPathError, match=r"--n-best .*l.txt: the same file as -o .*a.txt"):
        check_distinct_outputs({"-o": a, "--scores": None, "--n-best": link})
    with atomic_open(a) as fh:
        with pytest.raises(OutputPathError, match="already being written"):
            with atomic_open(link):
                pass
        fh.write("x")
    assert a.read_text() == "x"


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "smtbench.cli", *args], capture_output=True, text=True, **kw)


def test_cli_decode_outputs_checked_before_loading(tmp_path):
    f = tmp_path / "f.txt"
    r = _cli("decode", "cube", "--config", str(tmp_path / "no.ini"), "-o", str(f), "--n-best", str(f), "5")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--n-best" in r.stderr and "the same file as -o" in r.stderr
    r = _cli("machine", "--out", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip() == f"smtbench: error: {tmp_path}: is a directory, expected a file name"
    f.write_text("x\n")
    r = _cli("machine", "--out", str(f / "x"))
    assert r.returncode == 2 and "a parent is not a directory" in r.stderr and r.stderr.count("\n") == 1


def test_stdout_dash_written_through(tmp_path):
    code = ("import sys; from smtbench.ioutil import atomic_open\n"
            "with atomic_open('-') as fh: fh.write('a\\n')\n"
            "with atomic_open('-', 'wb') as fh: fh.write(b'b\\n')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path)
    assert r.stdout == b"a\nb\n" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", ["TERM", "INT"])
def test_binarize_signal_leaves_no_temporary_file(tmp_path, sig):
    """`tm binarize` stopped by SIGTERM/SIGINT while it writes: exit 128 + signal, no temporary file left."""
    import signal
    import time
    pt = tmp_path / "pt.txt"
    with open(pt, "w") as fh:
        for i in range(300_000):
            fh.write(f"w{i % 50000} x{i % 997} ||| t{i} u{i % 31} v ||| 0.5 0.25 0.125 0.0625\n")
    out = tmp_path / "out" / "pt.bin"
    p = subprocess.Popen([sys.executable, "-m", "smtbench.cli", "tm", "binarize", "--phrase-table", str(pt),
                          "--out", str(out)], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not (
            out.parent.exists() and any(x.name.endswith(".tmp") for x in out.parent.iterdir())):
        time.sleep(0.005)
    if p.poll() is not None:
        pytest.skip("the run finished before the signal could be sent")
    p.send_signal(getattr(signal, f"SIG{sig}"))
    p.wait(timeout=20)
    assert p.returncode == 128 + getattr(signal, f"SIG{sig}"), p.stderr.read()
    assert [x.name for x in out.parent.iterdir()] == []
