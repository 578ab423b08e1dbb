"""Run the live peers of a decoding table (config/peers.yaml: Moses2, Moses v1, a user's own decoder) and our own
decoders as processes, the same way, on the same moses.ini and input.

How decoding time is measured, for every system alike: the wall time of a whole process run on the input, minus
the wall time of the same command (or the entry's ``load`` command) on the input's first line only (loading the
model, starting the process and decoding one sentence); both runs are taken in the same repeat, one after the other.
So the figure excludes loading for every system in the same way, includes reading the input and writing the output,
and is slightly low by one sentence's decoding (the same sentence for every system, which the ratio's words count
excludes)."""
from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import procs
from ..errors import PeerFailed, last_line
if TYPE_CHECKING:
    from ..peers import Peer

#: what each system's command looks like (a template for the tables' notes)
SEARCHES = ("normal", "cube")


@dataclass
class Decoder:
    """One system's command line for one search setting (``cwd``: where the ini's relative paths resolve).
    ``output``: how its stdout is read, ``score-lines`` ('SCORE HYP', Moses' -output-hypo-score) or ``lines``
    (1-best only); words ``{scores}``, ``{nbest}``, ``{input}``, ``{output}`` in ``argv`` are files of each run
    (config/peers.yaml). ``load_argv``: the one-line loading run's command (None: ``argv``)."""
    name: str            # e.g. "moses2", "moses", "ours", a user's entry
    argv: list[str]
    cwd: str
    output: str = "score-lines"
    load_argv: list[str] | None = None
    label: str | None = None
    strict: bool | None = None  # the identity rule's stop (decode.compare.peer_identity; None: its default)

    def describe(self) -> str:
        return " ".join(Path(self.argv[0]).name if i == 0 else a for i, a in enumerate(self.argv))


def peer_decoder(peer: Peer, ini: str | os.PathLike, search: str, stack: int, pop_limit: int | None = None,
                 threads: int = 1) -> Decoder:
    """The entry ``peer`` of a peers file (smtbench.peers) on ``ini``, run from the ini's folder."""
    if search not in SEARCHES:
        raise ValueError(f"search {search!r}: one of {', '.join(SEARCHES)}")
    ini = Path(ini).resolve()
    values = {"ini": ini, "ini_dir": ini.parent, "threads": threads, "stack": stack, "pop_limit": pop_limit,
              "search": search, "search_algorithm": 1 if search == "cube" else 0}
    return Decoder(peer.name, peer.argv(search, values), str(ini.parent), output=peer.output,
                   load_argv=peer.argv(search, values, loading=True) if peer.load else None, label=peer.label,
                   strict=peer.strict)


def moses_decoder(program: str, ini: str | os.PathLike, search: str, stack: int, pop_limit: int | None = None,
                  threads: int = 1, extra: Sequence[str] = ()) -> Decoder:
    """Moses2 (``moses2``) or Moses v1 (``moses``) on ``ini`` as config/peers.yaml declares them (run from the
    ini's folder: Moses resolves the ini's relative paths against its working directory; ``-output-hypo-score``
    prints ``SCORE HYP`` lines)."""
    from .. import peers
    dec = peer_decoder(peers.load()[program], ini, search, stack, pop_limit, threads)
    dec.argv += list(extra)
    return dec


def our_decoder(ini: str | os.PathLike, search: str, stack: int, pop_limit: int | None = None, threads: int = 0,
                extra: Sequence[str] = ()) -> Decoder:
    """Our ``smtbench decode normal|cube`` on ``ini`` as a process, its model scores written to a file
    (``--scores``)."""
    import shutil
    import sys
    if search not in SEARCHES:
        raise ValueError(f"search {search!r}: one of {', '.join(SEARCHES)}")
    exe = shutil.which("smtbench")
    ini = Path(ini).resolve()
    argv = [exe] if exe else [sys.executable, "-m", "smtbench.cli"]  # not installed on PATH: this interpreter's
    argv += ["decode", search, "-f", str(ini), "-s", str(stack), "--no-progress"]
    if search == "cube":
        argv += ["--pop-limit", str(pop_limit)]
        if threads:
            argv += ["--threads", str(threads)]
    return Decoder("ours", argv + list(extra) + ["--scores", "{scores}"], str(ini.parent), output="lines",
                   label="ours")


@dataclass
class Run:
    wall_s: float
    lines: list[str]
    scores: list[float] | None   # None: the system gives no scores (text-only identity)
    stderr: str
    digits: int | None = None  # the decimals the peer printed its scores with (compare.printed_digits)
    line_digits: list[int | None] | None = None  # each line's own (compare.line_decimals; Moses v1 prints %g)


def _read_scores(path: str, what: str) -> tuple[list[float], list[str]]:
    from ..ioutil import open_text
    with open_text(path) as fh:
        texts = [line.strip() for line in fh]
    try:
        return [float(x) for x in texts], texts
    except ValueError:
        i = next(i for i, x in enumerate(texts) if not _is_float(x))
        raise PeerFailed(f"{what}: scores line {i + 1} is not a number: {texts[i][:80]!r}") from None


def _is_float(x: str) -> bool:
    try:
        float(x)
        return True
    except ValueError:
        return False


def _read_nbest(path: str, n: int, what: str) -> tuple[list[float], list[str]]:
    """Each sentence's score from a Moses-format n-best list (``sid ||| hyp ||| features ||| total``): the first
    entry of the sentence (Moses prints its best first)."""
    from ..ioutil import open_text
    first: dict[int, str] = {}
    with open_text(path) as fh:
        for i, line in enumerate(fh):
            f = line.rstrip("\n").split(" ||| ")
            try:
                first.setdefault(int(f[0]), f[3].strip())
            except (ValueError, IndexError):
                raise PeerFailed(f"{what}: n-best line {i + 1} is not 'SID ||| HYP ||| FEATURES ||| TOTAL': "
                                   f"{line[:80]!r}") from None
    gone = [i + 1 for i in range(n) if i not in first]
    if gone:
        raise PeerFailed(f"{what}: the n-best list has no entry for sentence {gone[0]} ({len(gone)} missing)")
    texts = [first[i] for i in range(n)]
    return [float(x) for x in texts], texts


def run(dec: Decoder, input_path: str | os.PathLike, keep_output: bool = True, loading: bool = False) -> Run:
    """One process run of ``dec`` (``loading``: its one-line loading command) on ``input_path``; its 1-best lines
    (and scores where it gives them)."""
    from .compare import line_decimals, printed_digits

    template = dec.load_argv if loading and dec.load_argv else dec.argv
    with tempfile.TemporaryDirectory(prefix="smtbench-peer-") as tmp:
        files = {k: os.path.join(tmp, k) for k in ("scores", "nbest", "output")}
        files["input"] = str(Path(input_path).resolve())
        argv = list(template)
        for k, v in files.items():
            argv = [a.replace("{" + k + "}", v) for a in argv]
        named = {k for k in files if any("{" + k + "}" in a for a in template)}
        out_path = files["output"] if "output" in named else os.path.join(tmp, "stdout")
        with open(input_path, "rb") as src, open(os.path.join(tmp, "stdout"), "wb") as out:
            t0 = time.perf_counter()
            r = procs.run(argv, stdin=subprocess.DEVNULL if "input" in named else src, stdout=out,
                               stderr=subprocess.PIPE, cwd=dec.cwd)
            wall = time.perf_counter() - t0
        err = r.stderr.decode(errors="replace")
        what = f"{dec.describe()} < {input_path}"
        if r.returncode != 0:
            raise PeerFailed(f"{what}: exit {r.returncode}: {last_line(err, '(nothing on stderr)')[-500:]}")
        if not keep_output:
            return Run(wall, [], None, err)
        if not os.path.exists(out_path):
            raise PeerFailed(f"{what}: wrote no {{output}} file")
        with open(out_path, encoding="utf-8", errors="replace") as fh:
            raw = [line.rstrip("\n") for line in fh]
        if dec.output == "score-lines":
            lines, scores, printed = score_lines(raw, dec.describe())
            return Run(wall, lines, scores, err, printed_digits(printed), line_decimals(printed))
        lines = [x.strip() for x in raw]
        if "scores" in named:
            scores, texts = _read_scores(files["scores"], what)
        elif "nbest" in named:
            scores, texts = _read_nbest(files["nbest"], len(lines), what)
        else:
            return Run(wall, lines, None, err)
        return Run(wall, lines, scores, err, printed_digits(texts), line_decimals(texts))


def score_lines(raw: Sequence[str], what: str) -> tuple[list[str], list[float], list[str]]:
    """Moses' -output-hypo-score lines ('SCORE HYP'): (hypotheses, scores, the scores as printed); PeerFailed names
    ``what`` and the line that is not one."""
    lines, scores, printed = [], [], []
    for i, line in enumerate(raw):
        score, _, hyp = line.strip().partition(" ")
        printed.append(score)
        try:
            scores.append(float(score))
        except ValueError:
            raise PeerFailed(f"{what}: output line {i + 1} is not 'SCORE HYP': {line[:80]!r}") from None
        lines.append(hyp.strip())
    return lines, scores, printed


def first_line_file(input_path: str | os.PathLike, tmpdir: str | os.PathLike) -> str:
    """A file holding only the first line of ``input_path`` (the loading-only run's input)."""
    from ..ioutil import open_text
    with open_text(input_path) as fh:
        first = fh.readline()
    path = os.path.join(str(tmpdir), "first-line")
    with open(path, "w", encoding="utf-8") as out:
        out.write(first if first.endswith("\n") else first + "\n")
    return path
