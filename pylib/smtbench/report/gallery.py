"""The report page's listing: every table and figure of a results directory, each under its paper with that
paper's caption (workflow/report/<paper>.rst) followed by the table's own title and notes, which the report
modules write from the rows (the first lines of the .md beside each table or figure).
`snakemake -s workflow/report.smk --report results/report.html [--config results=DIR]` builds the page from it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# file-name prefix -> paper (caption file workflow/report/<paper>.rst); longest prefix wins
PAPERS = {
    "glm_": "glm_btree",
    "lm_": "lm_models",
    "mediani_": "mediani_scoring",
    "mokry_table3_2": "mokry_hash", "mokry_fig3_2": "mokry_hash", "mokry_hash": "mokry_hash",
    "mokry_table3_3": "mokry_lm", "mokry_fig3_5": "mokry_lm",
    "mokry_table3_4": "mokry_decoder", "mokry_fig3_6": "mokry_decoder",
    "moore_quirk": "moore_quirk",
    "moses2_table4": "moses2_search", "moses2_table5": "moses2_search", "moses2_fig6": "moses2_search",
    "moses2_": "moses2_scaling",
    "moses2_fig1": "moses2_moses1", "moses2_fig2": "moses2_moses1", "moses2_fig11": "moses2_scaling",  # F1, F2, F10
    "tune_": "tune",
    "moses_decode": "moses_decode",
    "moses_training": "moses_training",
    "regression": "regression",
    "history": "history",  # smtbench report history (issue 23): headline ratios over commits
}
KINDS = ("tables", "figures")


@dataclass
class Entry:
    path: Path
    paper: str
    caption: Path      # the rst file snakemake renders (written under the caption dir)


def paper_of(name: str) -> str:
    best = max((p for p in PAPERS if name.startswith(p)), key=len, default=None)
    return PAPERS[best] if best else "other"


def _md_text(md: Path, limit: int = 1500) -> str:
    """The title (first '# ' line) and the notes after the table of a report module's .md, as plain text."""
    if not md.is_file():
        return ""
    lines = md.read_text(encoding="utf-8").splitlines()
    title = next((ln[2:].strip() for ln in lines if ln.startswith("# ")), "")
    notes = [ln.strip() for ln in lines if ln.strip() and not ln.startswith(("#", "|"))]
    text = " ".join([title + ("." if title and not title.endswith(".") else "")] + notes).strip()
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def _rst_escape(text: str) -> str:
    for ch in ("\\", "*", "`", "|", "_"):
        text = text.replace(ch, "\\" + ch)
    return text.replace("{{", "{ {").replace("}}", "} }").replace("{%", "{ %")


def listing(results: str | os.PathLike[str], captions: str | os.PathLike[str],
            paper_captions: str | os.PathLike[str]) -> list[Entry]:
    """Every file of RESULTS/tables and RESULTS/figures, sorted, with a caption file written under ``captions``:
    the paper's caption (``paper_captions``/<paper>.rst) and the table's own title and notes."""
    res, cap_dir, paper_dir = Path(results), Path(captions), Path(paper_captions)
    out: list[Entry] = []
    for kind in KINDS:
        d = res / kind
        if not d.is_dir():
            continue
        for f in sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith(".")):
            paper = paper_of(f.name)
            base = paper_dir / f"{paper}.rst"
            text = base.read_text(encoding="utf-8").strip() if base.is_file() else \
                f"Output of the {paper} experiment."
            own = _md_text(res / "tables" / f"{f.stem}.md")
            body = text + ("\n\n" + _rst_escape(own) if own else "") + "\n"
            cap = cap_dir / f"{f.name}.rst"
            if not cap.is_file() or cap.read_text(encoding="utf-8") != body:
                cap.parent.mkdir(parents=True, exist_ok=True)
                from ..ioutil import atomic_write_text
                atomic_write_text(cap, body)
            out.append(Entry(f, paper, cap))
    return out
