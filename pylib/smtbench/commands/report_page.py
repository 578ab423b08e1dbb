"""`smtbench report page`: the HTML report page of any results directory (workflow/report.smk via Snakemake)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["report"].add_parser(
        "page", help="one HTML page with every table and figure of a results directory, grouped by paper",
        description="Runs `snakemake -s workflow/report.smk --report OUT --config results=RESULTS` from this "
                    "checkout: every file of RESULTS/tables and RESULTS/figures, captioned with its paper's text and "
                    "the table's own title and notes.")
    p.add_argument("--results", default="results", help="the results directory (a profile's outdir)")
    p.add_argument("--out", default=None, help="the HTML page (default: RESULTS/report.html)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os
    import shutil
    import sys
    from pathlib import Path

    from .. import procs
    from ..report.common import repo_root
    res = Path(args.results).resolve()
    if not (res / "tables").is_dir() and not (res / "figures").is_dir():
        raise ValueError(f"--results {args.results}: no tables/ or figures/ folder (is it a results directory?)")
    out = Path(args.out).resolve() if args.out else res / "report.html"
    root = repo_root()
    snakefile = root / "workflow" / "report.smk"
    if not snakefile.is_file():
        raise ValueError(f"{snakefile}: not found (run from a checkout of smtbench)")
    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    r = procs.run([exe, "-s", str(snakefile), "--report", str(out), "--config", f"results={res}"], cwd=root,
                  env=os.environ.copy())
    if r.returncode:
        raise ValueError(f"snakemake --report failed (exit {r.returncode})")
    print(out)
    return 0
