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
