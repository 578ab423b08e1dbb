"""The cache (decompressed ARPA copies): a documented root, shown and cleaned by `smtbench cache`."""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from toy_models import TOY_ARPA


def test_cache_root_info_and_clean(tmp_path, monkeypatch):
    from smtbench.cache import cache_root
    from smtbench.decode.derivation import plain_arpa
    root = tmp_path / "cache"
    monkeypatch.setenv("SMTBENCH_CACHE", str(root))
    assert cache_root() == root
    arpa = tmp_path / "lm.arpa.gz"
    with gzip.open(arpa, "wt") as fh:
        fh.write(TOY_ARPA)
    plain = plain_arpa(Path(arpa))
    assert plain.parent == root / "arpa" and plain.read_text().startswith("\\data\\")
    env = {"SMTBENCH_CACHE": str(root), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "cache"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and str(root) in r.stdout and "arpa: 1 files" in r.stdout
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "cache", "clean"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0 and "removed 1 files" in r.stdout and not plain.exists()
    (root / "mine.txt").write_text("not the cache's")   # a mistyped root is refused, not emptied
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "cache", "clean"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 2 and "did not write" in r.stderr and (root / "mine.txt").exists()
