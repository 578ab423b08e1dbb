# The report page: every table and figure of a results directory on one HTML page, grouped by paper, each captioned
# with its paper's text (workflow/report/<paper>.rst) and the table's own title and notes (written from its rows).
#   snakemake -s workflow/report.smk --report results/report.html                       (the committed results/)
#   snakemake -s workflow/report.smk --report build/smoke/report.html --config results=build/smoke
# One rule over existing files only: nothing is run, and no rule's outputs are looked up (no metadata warnings).
# The listing is smtbench.report.gallery.listing (tests/test_report_gallery.py checks it lists every file).
from pathlib import Path

from smtbench.report.gallery import listing

RESULTS = config.get("results", "results")
CAPTIONS = f"build/report-captions/{Path(RESULTS).resolve().name}"


rule gallery:
    input:
        [report(e.path, caption=str(e.caption.resolve()), category=e.paper)
         for e in listing(RESULTS, CAPTIONS, Path(workflow.basedir) / "report")],
