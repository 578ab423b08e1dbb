"""Run Moses2 or Moses v1 (built by tools/build_moses.sh) and our own decoders as processes, the same way, on the
same moses.ini and input: the live peer of every decoding table.

How decoding time is measured, for every system alike: the wall time of a whole process run on the input, minus
the wall time of the same command on the input's first line only (loading the model, starting the process and
decoding one sentence); both runs are taken in the same repeat, one after the other. So the figure excludes loading
for Moses2, Moses and ours in the same way, includes reading the input and writing the output, and is slightly
low by one sentence's decoding (the same sentence for every system, which the ratio's words count excludes)."""
from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .. import moses_peer
from .. import procs

#: what each system's command looks like (a template for the tables' notes)
SEARCHES = ("normal", "cube")


@dataclass
class Decoder:
    """One system's command line for one search setting (``cwd``: where the ini's relative paths resolve)."""
    name: str            # e.g. "moses2", "moses", "ours"
    argv: list[str]
    cwd: str

    def describe(self) -> str:
        return " ".join(Path(self.argv[0]).name if i == 0 else a for i, a in enumerate(self.argv))


def moses_decoder(program: str, ini: str | os.PathLike, search: str, stack: int, pop_limit: int | None = None,
                  threads: int = 1, extra: Sequence[str] = ()) -> Decoder:
    """Moses2 (``moses2``) or Moses v1 (``moses``) on ``ini``, run from the ini's folder (Moses resolves the
    ini's relative paths against its working directory). ``-output-hypo-score`` prints ``SCORE HYP`` lines."""
    if search not in SEARCHES:
        raise ValueError(f"search {search!r}: one of {', '.join(SEARCHES)}")
    ini = Path(ini).resolve()
    argv = [str(moses_peer.program(program)), "-f", str(ini), "-v", "0", "-threads", str(threads),
            "-search-algorithm", "1" if search == "cube" else "0", "-s", str(stack), "-output-hypo-score"]
    if search == "cube":
        argv += ["-cube-pruning-pop-limit", str(pop_limit)]
    return Decoder(program, argv + list(extra), str(ini.parent))


def our_decoder(ini: str | os.PathLike, search: str, stack: int, pop_limit: int | None = None, threads: int = 0,
                extra: Sequence[str] = ()) -> Decoder:
    """Our ``smtbench decode normal|cube`` on ``ini`` as a process, with the model score printed first as Moses'
    ``-output-hypo-score`` does (``--scores``)."""
    import shutil
    import sys
    if search not in SEARCHES:
        raise ValueError(f"search {search!r}: one of {', '.join(SEARCHES)}")
    exe = shutil.which("smtbench") or sys.argv[0]
    ini = Path(ini).resolve()
    argv = [exe, "decode", search, "-f", str(ini), "-s", str(stack), "--no-progress"]
    if search == "cube":
        argv += ["--pop-limit", str(pop_limit)]
        if threads:
            argv += ["--threads", str(threads)]
    return Decoder("ours", argv + list(extra), str(ini.parent))


@dataclass
class Run:
    wall_s: float
    lines: list[str]
    scores: list[float] | None
    stderr: str
    digits: int | None = None  # the decimals the peer printed its scores with (compare.printed_digits)


def run(dec: Decoder, input_path: str | os.PathLike, keep_output: bool = True) -> Run:
    """One process run of ``dec`` on ``input_path``; its 1-best lines (and scores where printed)."""
    with open(input_path, "rb") as src, tempfile.TemporaryDirectory(prefix="smtbench-peer-") as tmp:
        out_path = os.path.join(tmp, "out")
        argv = list(dec.argv)
        scores_path = None
        if dec.name == "ours":
            scores_path = os.path.join(tmp, "scores")
            argv += ["--scores", scores_path]
        with open(out_path, "wb") as out:
            t0 = time.perf_counter()
            r = procs.run(argv, stdin=src, stdout=out, stderr=subprocess.PIPE, cwd=dec.cwd)
            wall = time.perf_counter() - t0
        err = r.stderr.decode(errors="replace")
        if r.returncode != 0:
            raise RuntimeError(f"{dec.describe()} < {input_path}: exit {r.returncode}: {err.strip()[-1500:]}")
        if not keep_output:
            return Run(wall, [], None, err)
        with open(out_path, encoding="utf-8", errors="replace") as fh:
            raw = [line.rstrip("\n") for line in fh]
        if dec.name == "ours":
            with open(scores_path) as fh:  # type: ignore[arg-type]
                scores = [float(x) for x in fh.read().split()]
            return Run(wall, [x.strip() for x in raw], scores, err)
        lines, scores, printed = [], [], []
        for i, line in enumerate(raw):
            score, _, hyp = line.strip().partition(" ")
            printed.append(score)
            try:
                scores.append(float(score))
            except ValueError:
                raise RuntimeError(f"{dec.describe()}: output line {i + 1} is not 'SCORE HYP': {line[:80]!r}")
            lines.append(hyp.strip())
        from .compare import printed_digits
        return Run(wall, lines, scores, err, printed_digits(printed))


def first_line_file(input_path: str | os.PathLike, tmpdir: str | os.PathLike) -> str:
    """A file holding only the first line of ``input_path`` (the loading-only run's input)."""
    from ..ioutil import open_text
    with open_text(input_path) as fh:
        first = fh.readline()
    path = os.path.join(str(tmpdir), "first-line")
    with open(path, "w", encoding="utf-8") as out:
        out.write(first if first.endswith("\n") else first + "\n")
    return path
