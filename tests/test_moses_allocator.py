"""Issue 40: Moses is built as its users build it (tcmalloc where installed) and every Moses row says which
allocator its programs run with, read from the binary (moses_peer.allocator_of): checked on small binaries compiled
here (linked against a stand-in libtcmalloc_minimal.so, carrying tcmalloc's symbols statically, plain), on the
built moses2 when there is one, and on the build script's bjam command (dry run on a stand-in checkout)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import ROOT
from smtbench import moses_peer

cc = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(cc is None, reason="no C compiler to build the stand-in binaries")


def _cc(*args: str) -> None:
    subprocess.run([cc, *args], check=True, capture_output=True)


@needs_cc
def test_allocator_read_from_shared_static_and_plain_binaries(tmp_path):
    (tmp_path / "lib.c").write_text("void *tc_malloc(unsigned long n) { return 0; }\n")
    (tmp_path / "main.c").write_text("int main(void) { return 0; }\n")
    _cc("-shared", "-fPIC", "-o", str(tmp_path / "libtcmalloc_minimal.so"), str(tmp_path / "lib.c"))
    _cc("-o", str(tmp_path / "shared"), str(tmp_path / "main.c"), "-Wl,--no-as-needed", f"-L{tmp_path}",
        "-ltcmalloc_minimal")
    _cc("-o", str(tmp_path / "static"), str(tmp_path / "main.c"), str(tmp_path / "lib.c"))
    _cc("-o", str(tmp_path / "plain"), str(tmp_path / "main.c"))
    assert moses_peer.allocator_of(tmp_path / "shared") == "tcmalloc (shared: libtcmalloc_minimal.so)"
    assert moses_peer.allocator_of(tmp_path / "static") == "tcmalloc (static)"
    assert moses_peer.allocator_of(tmp_path / "plain") == "glibc malloc"
    (tmp_path / "text").write_text("#!/bin/sh\n")
    with pytest.raises(ValueError, match="not a 64-bit"):
        moses_peer.allocator_of(tmp_path / "text")


def test_rows_of_a_moses_run_carry_the_allocator(tmp_path, monkeypatch):
    """experiments.harness.rows adds moses_peer.build_fields to a Moses experiment's rows (None: not built)."""
    import json

    from smtbench.experiments.harness import rows
    monkeypatch.setenv("SMTBENCH_MOSES_BIN", str(tmp_path / "bin"))
    out = tmp_path / "r.jsonl"
    with rows("decode_normal", str(out)) as w:
        w.emit(x=1)
    row = json.loads(out.read_text())
    assert row["moses2_allocator"] is None and row["moses_allocator"] is None
    if cc is not None:
        (tmp_path / "bin").mkdir()
        (tmp_path / "m.c").write_text("int main(void) { return 0; }\n")
        _cc("-o", str(tmp_path / "bin" / "moses2"), str(tmp_path / "m.c"))
        with rows("decode_normal", str(out)) as w:
            w.emit(x=1)
        assert json.loads(out.read_text())["moses2_allocator"] == "glibc malloc"
    with rows("mokry_lm", str(out)) as w:  # no Moses in it: no allocator fields
        w.emit(x=1)
    assert "moses2_allocator" not in json.loads(out.read_text())


@pytest.mark.skipif(not moses_peer.available("moses2"), reason=f"moses2 {moses_peer.NOT_BUILT}")
def test_allocator_of_the_built_moses2():
    a = moses_peer.allocator_of(moses_peer.program("moses2"))
    assert a.startswith(("tcmalloc", "glibc", "jemalloc"))


def test_build_script_links_tcmalloc_as_moses_does(tmp_path):
    """The bjam command has no --without-tcmalloc and the packages include libgoogle-perftools-dev."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "Jamroot").write_text("alias programs : a b\n  c\n;\nbuild-projects x ;\n")
    r = subprocess.run(["bash", str(ROOT / "tools" / "build_moses.sh"), "test"], capture_output=True, text=True,
                       env={**os.environ, "MOSES_SRC": str(src), "MOSES_CACHE": str(tmp_path / "cache"),
                            "MOSES_DRY_RUN": "1"})
    assert r.returncode == 0, r.stderr
    assert "bjam" in r.stdout and "without-tcmalloc" not in r.stdout
    assert "libgoogle-perftools-dev" in (ROOT / "tools" / "build_moses.sh").read_text()
