"""A Moses model folder from our training: moses.ini (as train-model.perl writes it, default weights), the phrase
table, the reordering table and an ARPA LM; and Moses' `filter-model-given-input.pl` (keep the pairs whose source
phrase occurs in the input)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from ..ioutil import atomic_open, open_text

INI_TEMPLATE = """\
#########################
### MOSES CONFIG FILE ###
#########################
# written by smtbench (the layout of Moses' train-model.perl, default untuned weights)

# input factors
[input-factors]
0

# mapping steps
[mapping]
0 T 0

[distortion-limit]
{distortion_limit}

# feature functions
[feature]
UnknownWordPenalty
WordPenalty
PhrasePenalty
PhraseDictionaryMemory name=TranslationModel0 num-features=4 path={phrase_table} input-factor=0 output-factor=0{table_limit}
{reordering_line}Distortion
KENLM name=LM0 factor=0 path={lm} order={order}

# dense weights for feature functions
[weight]
# The default weights are NOT optimized for translation quality.
UnknownWordPenalty0= 1
WordPenalty0= -1
PhrasePenalty0= 0.2
TranslationModel0= 0.2 0.2 0.2 0.2
{reordering_weights}Distortion0= 0.3
LM0= 0.5
"""


def write_ini(out: str | os.PathLike[str], phrase_table: str, lm: str, order: int,
              reordering_table: str | None = None, distortion_limit: int = 6, table_limit: int | None = None) -> None:
    """Paths are written as given (relative paths resolve against the working directory, then the ini's folder).
    ``table_limit``: PhraseDictionaryMemory's table-limit (None: not written, Moses' default 20)."""
    ro_line = (f"LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff "
               f"input-factor=0 output-factor=0 path={reordering_table}\n") if reordering_table else ""
    ro_w = "LexicalReordering0= 0.3 0.3 0.3 0.3 0.3 0.3\n" if reordering_table else ""
    text = INI_TEMPLATE.format(distortion_limit=distortion_limit, phrase_table=phrase_table, lm=lm, order=order,
                               reordering_line=ro_line, reordering_weights=ro_w,
                               table_limit=f" table-limit={table_limit}" if table_limit is not None else "")
    with atomic_open(out) as fh:
        fh.write(text)


def _place(src: str, dst: Path) -> None:
    """Hard-link (or copy) a table into the model folder, atomically."""
    import shutil
    tmp = dst.with_name(f".{dst.name}.tmp")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def make_model(outdir: str | os.PathLike[str], phrase_table: str, reordering_table: str | None, lm: str, order: int,
               distortion_limit: int = 6, table_limit: int | None = None) -> Path:
    """A Moses model folder: the tables hard-linked (or copied) into ``outdir`` under train-model.perl's names,
    the LM referenced by a path relative to the folder, and moses.ini (returned)."""
    if not 1 <= order <= 8:
        raise ValueError(f"--order {order}: must be in 1..8")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for path in (phrase_table, reordering_table, lm):
        if path and not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    pt = out / ("phrase-table" + "".join(Path(phrase_table).suffixes[-1:]))
    _place(phrase_table, pt)
    rt = None
    if reordering_table:
        rt = out / ("reordering-table.wbe-msd-bidirectional-fe" + "".join(Path(reordering_table).suffixes[-1:]))
        _place(reordering_table, rt)
    lm_rel = os.path.relpath(Path(lm).resolve(), out.resolve())
    if table_limit is not None and not 0 <= table_limit <= 10_000:
        raise ValueError(f"--table-limit {table_limit}: must be in 0..10000")
    write_ini(out / "moses.ini", pt.name, lm_rel, order, rt.name if rt else None, distortion_limit,
              table_limit)
    return out / "moses.ini"


def input_phrases(inputs: Iterable[str], max_length: int = 20) -> set[str]:
    """Every contiguous word sequence (up to max_length words) of the input sentences."""
    out: set[str] = set()
    for path in inputs:
        with open_text(path) as fh:
            for line in fh:
                w = line.split()
                for i in range(len(w)):
                    for j in range(i + 1, min(len(w), i + max_length) + 1):
                        out.add(" ".join(w[i:j]))
    return out


def filter_table(table: str, out: str, phrases: set[str]) -> tuple[int, int]:
    """Keep the lines whose source phrase (the first `|||` field) is in ``phrases``; (kept, read)."""
    kept = read = 0
    with open_text(table) as fh, atomic_open(out) as fo:
        for line in fh:
            read += 1
            src = line.split(" ||| ", 1)[0].strip()
            if src in phrases:
                fo.write(line)
                kept += 1
    return kept, read


def compare_tables(ours: str, theirs: str, columns: int) -> dict:
    """Same pairs, and the same ``columns`` scores to printed precision (6 significant digits, ±1 in the last)."""
    from ..decode.nbest import printed_tolerance

    def load(path: str) -> dict[tuple[str, str], list[str]]:
        d: dict[tuple[str, str], list[str]] = {}
        with open_text(path) as fh:
            for line in fh:
                p = line.rstrip("\n").split(" ||| ")
                d[(p[0].strip(), p[1].strip())] = p[2:]
        return d

    a, b = load(ours), load(theirs)
    common = a.keys() & b.keys()
    value_diff = align_diff = count_diff = 0
    examples: list[str] = []
    for k in sorted(common):
        va = [float(x) for x in a[k][0].split()][:columns]
        vb = [float(x) for x in b[k][0].split()][:columns]
        bad = [i for i, (x, y) in enumerate(zip(va, vb)) if abs(x - y) > printed_tolerance(y)]
        if bad:
            value_diff += 1
            if len(examples) < 10:
                examples.append(f"{k[0]} ||| {k[1]}: ours {a[k][0]} theirs {b[k][0]}")
        if len(a[k]) > 1 and len(b[k]) > 1 and a[k][1].split() != b[k][1].split():
            align_diff += 1
        if len(a[k]) > 2 and len(b[k]) > 2 and a[k][2].split() != b[k][2].split():
            count_diff += 1
    return {"ours": len(a), "theirs": len(b), "common": len(common), "only_ours": len(a.keys() - b.keys()),
            "only_theirs": len(b.keys() - a.keys()), "value_mismatches": value_diff,
            "alignment_mismatches": align_diff, "count_mismatches": count_diff, "examples": examples}
