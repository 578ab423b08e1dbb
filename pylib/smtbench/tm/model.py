"""A Moses model folder from our training: moses.ini (as train-model.perl writes it, default weights), the phrase
table, the reordering table and an ARPA LM; and Moses' `filter-model-given-input.pl` (keep the pairs whose source
phrase occurs in the input)."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterable

from ..ioutil import atomic_open, open_text
from ..ioutil import words as split_words
from .. import procs

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


def _stage(src: str, dst: Path) -> Path | None:
    """A temporary hard link (or copy) of a table beside ``dst``, for ``make_model`` to rename over it; None when
    ``dst`` already is that file (`tm train` writes its tables in the model folder: renaming a link onto its own
    inode would be a no-op that leaves the link behind)."""
    import shutil
    tmp = dst.with_name(f".{dst.name}.tmp")
    if tmp.exists() or tmp.is_symlink():  # a leftover of a killed run (or of the no-op rename before 2026-11-28)
        tmp.unlink()
    if dst.exists() and os.path.samefile(src, dst):
        return None
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    return tmp


def make_model(outdir: str | os.PathLike[str], phrase_table: str, reordering_table: str | None, lm: str, order: int,
               distortion_limit: int = 6, table_limit: int | None = None) -> Path:
    """A Moses model folder: the tables hard-linked (or copied) into ``outdir`` under train-model.perl's names,
    the LM referenced by a path relative to the folder, and moses.ini (returned). Everything is checked and
    staged first; the tables are renamed into place and moses.ini written last."""
    if not 1 <= order <= 8:
        raise ValueError(f"--order {order}: must be in 1..8")
    if table_limit is not None and not 0 <= table_limit <= 10_000:
        raise ValueError(f"--table-limit {table_limit}: must be in 0..10000")
    for path in (phrase_table, reordering_table, lm):
        if path and not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    pt = out / ("phrase-table" + "".join(Path(phrase_table).suffixes[-1:]))
    rt = None
    if reordering_table:
        rt = out / ("reordering-table.wbe-msd-bidirectional-fe" + "".join(Path(reordering_table).suffixes[-1:]))
    staged: list[tuple[Path, Path]] = []
    try:
        for src, dst in ((phrase_table, pt), (reordering_table, rt)):
            if src and dst is not None:
                tmp = _stage(src, dst)
                if tmp is not None:
                    staged.append((tmp, dst))
        lm_rel = os.path.relpath(Path(lm).resolve(), out.resolve())
        for tmp, dst in staged:
            os.replace(tmp, dst)
        staged = []
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
    write_ini(out / "moses.ini", pt.name, lm_rel, order, rt.name if rt else None, distortion_limit,
              table_limit)
    return out / "moses.ini"


def input_phrases(inputs: Iterable[str], max_length: int = 20) -> set[str]:
    """Every contiguous word sequence (up to max_length words) of the input sentences."""
    out: set[str] = set()
    for path in inputs:
        with open_text(path) as fh:
            for line in fh:
                w = split_words(line)
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


def _sorted_pairs(path: str, tmpdir: str):
    """The table's lines as ``(src ||| tgt, fields after it)``, in byte order of the pair (GNU sort, external: a
    full table fits in neither's memory twice). Keys end in a tab, so a pair sorts before its extensions as
    Python's string order has it."""
    import subprocess
    env = dict(os.environ, LC_ALL="C")
    srt = procs.Popen(["sort", "-S", "256M", "-T", tmpdir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      env=env)

    def feed() -> None:
        try:
            with open_text(path) as fh:
                for line in fh:
                    p = line.rstrip("\n").split(" ||| ")
                    srt.stdin.write((p[0].strip() + " ||| " + p[1].strip() + "\t" + "\t".join(p[2:]) + "\n")
                                    .encode())
        finally:
            srt.stdin.close()

    import threading
    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            feed()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the reader
            errors.append(exc)

    th = threading.Thread(target=guarded, daemon=True)
    th.start()
    for raw in srt.stdout:
        key, _, rest = raw.decode().rstrip("\n").partition("\t")
        yield key, rest.split("\t")
    th.join()
    if srt.wait():
        raise RuntimeError(f"sorting {path} failed")
    if errors:
        raise errors[0]


def compare_tables(ours: str, theirs: str, columns: int, tmpdir: str | None = None) -> dict:
    """Same pairs, and the same ``columns`` scores to printed precision (6 significant digits, ±1 in the last);
    alignments exactly and counts (where both tables have them) to printed precision too (Moses prints counts
    as floats with 6 significant digits). Streams both tables sorted
    by pair, so a full table compares in constant memory."""
    import tempfile

    from ..ioutil import printed_tolerance

    value_diff = align_diff = count_diff = n_a = n_b = only_a = only_b = 0
    examples: list[str] = []
    end = object()
    with tempfile.TemporaryDirectory(prefix=".compare.", dir=tmpdir) as td:
        ia, ib = _sorted_pairs(ours, td), _sorted_pairs(theirs, td)
        a, b = next(ia, end), next(ib, end)
        while a is not end or b is not end:
            if b is end or (a is not end and a[0] < b[0]):
                only_a += 1; n_a += 1; a = next(ia, end)  # noqa: E702
                continue
            if a is end or b[0] < a[0]:
                only_b += 1; n_b += 1; b = next(ib, end)  # noqa: E702
                continue
            (k, fa), (_, fb) = a, b
            va = [float(x) for x in fa[0].split()][:columns]
            vb = [float(x) for x in fb[0].split()][:columns]
            if len(va) != len(vb) or any(abs(x - y) > printed_tolerance(y) for x, y in zip(va, vb)):
                value_diff += 1
                if len(examples) < 10:
                    examples.append(f"{k}: ours {fa[0]} theirs {fb[0]}")
            if len(fa) > 1 and len(fb) > 1 and split_words(fa[1]) != split_words(fb[1]):
                align_diff += 1
            if len(fa) > 2 and len(fb) > 2:
                ca, cb = [float(x) for x in fa[2].split()], [float(x) for x in fb[2].split()]
                # Moses prints counts as floats, 6 significant digits (1.23457e+06)
                count_diff += len(ca) != len(cb) or any(abs(x - y) > printed_tolerance(y) for x, y in zip(ca, cb))
            n_a += 1; n_b += 1  # noqa: E702
            a, b = next(ia, end), next(ib, end)
    return {"ours": n_a, "theirs": n_b, "common": n_a - only_a, "only_ours": only_a, "only_theirs": only_b,
            "value_mismatches": value_diff, "alignment_mismatches": align_diff, "count_mismatches": count_diff,
            "examples": examples}
