"""The report page built by the documented command lists every table and figure of results/, without warnings."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from smtbench.report.gallery import listing, paper_of

ROOT = Path(__file__).resolve().parent.parent


def _files(results: Path) -> list[Path]:
    return sorted(p for kind in ("tables", "figures") for p in (results / kind).iterdir() if p.is_file())


def test_listing_covers_every_committed_table_and_figure(tmp_path):
    entries = listing(ROOT / "results", tmp_path / "captions", ROOT / "workflow" / "report")
    assert sorted(e.path for e in entries) == _files(ROOT / "results")
    for e in entries:
        assert e.paper != "other", f"{e.path.name}: no paper for this file name (smtbench.report.gallery.PAPERS)"
        assert (ROOT / "workflow" / "report" / f"{e.paper}.rst").is_file(), e.paper
        assert e.caption.read_text().strip()
    assert paper_of("moses2_table4.csv") == "moses2_search" and paper_of("moses2_table7.csv") == "moses2_scaling"


def test_documented_report_command_lists_everything(tmp_path):
    readme = (ROOT / "README.md").read_text() + (ROOT / "CONTRIBUTING.md").read_text()
    assert "snakemake -s workflow/report.smk --report results/report.html" in readme
    out = tmp_path / "report.html"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    r = subprocess.run(["snakemake", "-s", "workflow/report.smk", "--report", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "warn" not in (r.stdout + r.stderr).lower(), r.stderr[-2000:]
    html = out.read_text(errors="replace")
    missing = [p.name for p in _files(ROOT / "results") if p.name not in html]
    assert not missing, f"not on the report page: {missing}"


def test_notebooks_read_any_results_directory(tmp_path, monkeypatch):
    import json

    from smtbench.report.common import repo_root, results_dir
    monkeypatch.delenv("SMTBENCH_RESULTS", raising=False)
    assert results_dir() == repo_root() / "results"
    monkeypatch.setenv("SMTBENCH_RESULTS", str(tmp_path))
    assert results_dir() == tmp_path.resolve()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = [c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]
        src = ["".join(c["source"]) for c in cells]
        assert "RESULTS_DIR = results_dir()" in src[0], f"{nb.name}: the first cell must set RESULTS_DIR"
        assert all('"results"' not in s for s in src[1:]), f"{nb.name}: reads results/ past RESULTS_DIR"
