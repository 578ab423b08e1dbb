"""`smtbench bench moses2_moses1` (old name: `bench moses1`): the Moses2 paper's Figs 1, 2 and 10 with the live Moses
v1: Moses' decoding time with its phrase-table implementations (in-memory text ``PhraseDictionaryMemory``, the
probing table of ``CreateProbingPT``, the compact table where cmph was built), with its lexicalized-reordering
implementations (in-memory text, the binarized tree table of ``processLexicalTable``, the compact table where cmph
was built), and its speed against threads. Every variant is the same model (one moses.ini, the workflow's own by
default) with only the feature's storage changed; the binaries are made here from the ini's own text tables.

How decoding time is measured (every point alike): the wall time of ``moses`` on the whole input minus the wall
time of the same command on the input's first line only (loading the model, starting the process, decoding one
sentence), both in the same repeat, one right after the other; words/s counts the words of every line but the
first. Repeats follow the harness' repeat protocol (:mod:`smtbench.protocol`: interleaved over the points, in
reverse order on odd repeats or shuffled, the slow-spell probe, adaptive repeats). Each point's 1-best lines are
compared with the reference variant's (in-memory text tables at one thread): the tables hold the same numbers,
so the translations should agree; the count of differing lines is kept in the row."""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import moses_peer
from ..ioutil import atomic_open, atomic_path, open_text
from ..ioutil import words as split_words
from .harness import (Protocol, Task, loading_subtracted, must_agree, not_built, peer_missing,
                      progress as progress_bar, rows as open_rows, timed_process)
from .. import procs

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `moses2_moses1` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("moses2_moses1", ("moses1",),
         help="Moses v1 decoding time per phrase-table / reordering storage and thread count "
              "(Moses2 paper Figs 1, 2, 10; needs `make moses`)",
         settings=(
             arg("--model", action="append", required=True, metavar="NAME=INI",
                 help="a moses.ini with a PhraseDictionaryMemory text table (repeatable; the first is the main "
                      "model)"),
             arg("--input", required=True, help="source sentences"),
             arg("--sentences", type=int, default=0, help="the first N lines (0 = all)", config=True),
             arg("--threads", default="1,2", config=True, grid=True),
             arg("--phrase-tables", default="memory,probing", help="memory, probing, compact", config=True, grid=True),
             arg("--reorderings", default="memory,tree", help="memory, tree, compact", config=True, grid=True),
             arg("--search", choices=["normal", "cube"], default="normal", config=True),
             arg("-s", "--stack-size", type=int, default=200, config=True),
             arg("--pop-limit", type=int, default=400, config=True),
             protocol(repeats=2),
             arg("--workdir", required=True, help="binarized tables, variant moses.ini files"),
             arg("--out", help="rows (JSON lines)"),
             arg("--progress", action="store_true"),
             key("lm", help="the model's LM (a name in lm_models) where moses_training.smk does not make the model"),
             key("oracle_row", False, type=bool, help="also decode the Moses oracle's model (../shared)"),
         )),
)


PHRASE_TABLES = ("memory", "probing", "compact")
REORDERINGS = ("memory", "tree", "compact")
#: the Moses program each storage needs (besides ``moses`` itself)
NEEDS = {("pt", "memory"): None, ("pt", "probing"): "CreateProbingPT", ("pt", "compact"): "processPhraseTableMin",
         ("lr", "memory"): None, ("lr", "tree"): "processLexicalTable", ("lr", "compact"): "processLexicalTableMin"}


class IniError(ValueError):
    pass


@dataclass
class Moses1Sweep:
    models: dict[str, str]                     # name -> moses.ini (phrase-based, PhraseDictionaryMemory + text LR)
    input: str
    workdir: str
    sentences: int = 0
    threads: list[int] = field(default_factory=lambda: [1, 2])
    phrase_tables: list[str] = field(default_factory=lambda: ["memory", "probing"])
    reorderings: list[str] = field(default_factory=lambda: ["memory", "tree"])
    search: str = "normal"
    stack_size: int = 200
    pop_limit: int = 400
    repeats: int = 2
    protocol: Protocol | None = None  # the repeat protocol (default: exactly `repeats` alternating repeats)

    def proto(self) -> Protocol:
        return self.protocol or Protocol(repeats=self.repeats)

    def validate(self) -> None:
        if not self.models:
            raise ValueError("no model (--model NAME=moses.ini)")
        for name, ini in self.models.items():
            if not os.path.isfile(ini):
                raise FileNotFoundError(f"{ini}: no such file (model {name})")
        if not os.path.isfile(self.input):
            raise FileNotFoundError(f"{self.input}: no such file")
        bad = set(self.phrase_tables) - set(PHRASE_TABLES)
        if bad:
            raise ValueError(f"--phrase-tables: unknown {sorted(bad)} (one of {', '.join(PHRASE_TABLES)})")
        bad = set(self.reorderings) - set(REORDERINGS)
        if bad:
            raise ValueError(f"--reorderings: unknown {sorted(bad)} (one of {', '.join(REORDERINGS)})")
        if not self.threads or any(not 1 <= t <= 1024 for t in self.threads):
            raise ValueError(f"--threads {self.threads}: each in 1..1024")
        if not 1 <= self.repeats <= 100 or self.sentences < 0:
            raise ValueError("--repeats must be in 1..100 and --sentences >= 0")
        if self.search not in ("normal", "cube"):
            raise ValueError(f"--search {self.search!r}: normal or cube")


@dataclass
class ModelTables:
    """The text tables and LM a moses.ini names (absolute paths) and its lines, to rewrite per variant."""
    ini: Path
    lines: list[str]
    pt_line: int
    lr_line: int | None
    pt_path: Path
    lr_path: Path | None


def read_model(ini: str) -> ModelTables:
    """The ini's PhraseDictionaryMemory and LexicalReordering lines; every relative ``path=`` made absolute
    (Moses resolves them against its working directory; ours runs from the ini's folder)."""
    base = Path(ini).resolve().parent
    from ..ioutil import read_lines
    lines = read_lines(ini)
    pt_line = lr_line = None
    pt_path = lr_path = None
    for i, line in enumerate(lines):
        m = re.search(r"(?:^|\s)path=(\S+)", line)
        if not m:
            continue
        p = Path(m.group(1))
        if not p.is_absolute():
            p = (base / p).resolve()
        lines[i] = line[:m.start(1)] + str(p) + line[m.end(1):]
        head = line.split()[0]
        if head == "PhraseDictionaryMemory":
            pt_line, pt_path = i, p
        elif head == "LexicalReordering":
            lr_line, lr_path = i, p
    if pt_line is None:
        raise IniError(f"{ini}: no PhraseDictionaryMemory line (the variants start from Moses' text table)")
    return ModelTables(Path(ini), lines, pt_line, lr_line, pt_path, lr_path)


def _replace(line: str, head: str, path: str) -> str:
    parts = line.split()
    parts[0] = head
    return " ".join(re.sub(r"^path=.*", f"path={path}", p) for p in parts)


def _run_checked(argv: list[str], what: str, **kw) -> None:
    r = procs.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    if r.returncode:
        raise RuntimeError(f"{what}: {' '.join(argv)}: exit {r.returncode}: "
                           f"{r.stderr.decode(errors='replace').strip()[-800:]}")


def _sorted_table(src: Path, dst: Path, tmpdir: Path) -> None:
    """A text table sorted as Moses' own training leaves it (LC_ALL=C sort of the lines), for the binarizers."""
    with atomic_path(dst) as tmp:
        cat = "gzip -dc" if str(src).endswith(".gz") else ("xz -dc" if str(src).endswith(".xz") else "cat")
        _run_checked(["bash", "-o", "pipefail", "-c", f'{cat} "$0" | sort -S 256M -T "$1" > "$2"', str(src),
                      str(tmpdir), tmp], f"sorting {src}", env=dict(os.environ, LC_ALL="C"))


def build_storage(kind: str, storage: str, table: Path, outdir: Path) -> str:
    """The path a moses.ini gives the feature for this storage, building the binary table once (kept in outdir,
    rebuilt when the text table is newer)."""
    if storage == "memory":
        return str(table)
    outdir.mkdir(parents=True, exist_ok=True)
    stamp = outdir / f"{kind}-{storage}.done"
    # (what the binarizer's -out/--output-dir gets, what the ini's path= gets)
    prefix, ini_path = {("pt", "probing"): (outdir / "pt-probing", outdir / "pt-probing"),
                        ("pt", "compact"): (outdir / "pt-compact", outdir / "pt-compact.minphr"),
                        ("lr", "tree"): (outdir / "lr-tree" / "reordering-table",) * 2,
                        ("lr", "compact"): (outdir / "lr-compact",) * 2}[(kind, storage)]
    if stamp.exists() and stamp.stat().st_mtime >= table.stat().st_mtime:
        return str(ini_path)
    prog = str(moses_peer.program(NEEDS[(kind, storage)]))
    stamp.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix=".binarize.", dir=outdir) as td:
        sorted_txt = Path(td) / "table.txt"
        _sorted_table(table, sorted_txt, Path(td))
        if kind == "pt" and storage == "probing":
            import shutil
            shutil.rmtree(prefix, ignore_errors=True)
            _run_checked([prog, "--input-pt", str(sorted_txt), "--output-dir", str(prefix), "--num-scores", "4",
                          "--log-prob"], "CreateProbingPT")
        elif kind == "pt":
            _run_checked([prog, "-in", str(sorted_txt), "-out", str(prefix), "-nscores", "4", "-threads", "1",
                          "-T", td], "processPhraseTableMin")
        elif storage == "tree":
            prefix.parent.mkdir(parents=True, exist_ok=True)
            _run_checked([prog, "-in", str(sorted_txt), "-out", str(prefix)], "processLexicalTable")
        else:
            _run_checked([prog, "-in", str(sorted_txt), "-out", str(prefix), "-threads", "1", "-T", td],
                         "processLexicalTableMin")
    stamp.write_text("ok\n")
    return str(ini_path)


def write_variant(m: ModelTables, pt: str, lr: str, pt_path: str, lr_path: str | None, out: Path) -> None:
    lines = list(m.lines)
    heads = {"memory": "PhraseDictionaryMemory", "probing": "ProbingPT", "compact": "PhraseDictionaryCompact"}
    lines[m.pt_line] = _replace(lines[m.pt_line], heads[pt], pt_path)
    if m.lr_line is not None and lr_path is not None:
        lines[m.lr_line] = _replace(lines[m.lr_line], "LexicalReordering", lr_path)
    with atomic_open(out) as fh:
        fh.write("\n".join(lines) + "\n")


def _decode(argv: list[str], input_path: str) -> tuple[float, list[str]]:
    wall, out = timed_process(argv, input_path)
    return wall, [x.decode("utf-8", errors="replace").strip() for x in out.splitlines()]


def run_sweep(s: Moses1Sweep, out: str | None, progress: bool = False) -> list[dict]:
    s.validate()
    s.proto().validate()
    work = Path(s.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    with open_text(s.input) as fh:
        src = [x.rstrip("\n") for x in fh]
    src = src[:s.sentences] if s.sentences else src
    if len(src) < 2:
        raise ValueError(f"{s.input}: needs at least 2 lines (one is the loading-only run)")
    inp, first = work / "input", work / "input.first"
    with atomic_open(inp) as fh:
        fh.write("".join(x + "\n" for x in src))
    with atomic_open(first) as fh:
        fh.write(src[0] + "\n")
    words = sum(len(split_words(x)) for x in src[1:])
    config = dict(search=s.search, stack_size=s.stack_size, pop_limit=s.pop_limit if s.search == "cube" else None,
                  sentences=len(src), words_timed=words)
    rows: list[dict] = []
    with open_rows("moses2_moses1", out, stdout_when_none=True) as writer:
        points: list[dict] = []
        for name, ini in s.models.items():
            m = read_model(ini)
            for pt in s.phrase_tables:
                for lr in s.reorderings:
                    need = peer_missing("moses", NEEDS[("pt", pt)], NEEDS[("lr", lr)] if m.lr_path else None)
                    base = dict(model=name, phrase_table=pt, reordering=lr, **config)
                    if need:
                        for t in s.threads:
                            rows.append(not_built(writer, need, **base, threads=t, repeat=0))
                        continue
                    mdir = work / name
                    pt_path = build_storage("pt", pt, m.pt_path, mdir)
                    lr_path = build_storage("lr", lr, m.lr_path, mdir) if m.lr_path else None
                    vini = mdir / f"moses.{pt}-{lr}.ini"
                    write_variant(m, pt, lr, pt_path, lr_path, vini)
                    for t in s.threads:
                        argv = [str(moses_peer.program("moses")), "-f", str(vini), "-v", "0", "-threads", str(t),
                                "-search-algorithm", "1" if s.search == "cube" else "0", "-s", str(s.stack_size)]
                        if s.search == "cube":
                            argv += ["-cube-pruning-pop-limit", str(s.pop_limit)]
                        points.append(dict(base, threads=t, argv=argv))
        refs: dict[str, list[str]] = {}
        bar = progress_bar(len(points) * s.repeats, progress, "moses2_moses1")

        def task(p: dict) -> Task:
            def fn(rep: int) -> float:
                got: dict[str, list[str]] = {}

                def run(path: str) -> float:
                    wall, got[path] = _decode(p["argv"], path)
                    return wall
                whole, load, secs = loading_subtracted(run, str(inp), str(first))
                lines = got[str(inp)]
                must_agree(len(lines) == len(src),
                           f"{' '.join(p['argv'])}: {len(lines)} output lines for {len(src)} inputs")
                ref = refs.setdefault(p["model"], lines)  # the first point of the model: memory/memory, 1 thread
                differ = sum(a != b for a, b in zip(lines, ref))
                rows.append(writer.emit(**{k: v for k, v in p.items() if k != "argv"}, repeat=rep,
                                        whole_seconds=round(whole, 4), load_seconds=round(load, 4),
                                        decode_seconds=round(secs, 4),
                                        words_per_second=round(words / secs, 2) if secs > 0 else None,
                                        lines_differing_from_reference=differ,
                                        output_sha=hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16],
                                        command=" ".join([Path(p["argv"][0]).name, *p["argv"][1:]])))
                return secs * 1e9
            return Task(f"{p['model']}/{p['phrase_table']}/{p['reordering']}/{p['threads']}", fn)

        if points:
            Sweep("moses2_moses1", s.proto(), writer, progress=bar).add(*[task(p) for p in points]).run()
        bar.close()
    return rows


def main(args: argparse.Namespace) -> int:
    """`bench moses2_moses1` (options: VERBS above)."""
    from ..benchutil import parse_int_list
    models = {}
    for spec in args.model:
        name, sep, ini = spec.partition("=")
        if not sep or not name or not ini:
            raise ValueError(f"--model {spec!r}: expected NAME=moses.ini")
        if name in models:
            raise ValueError(f"--model {name}: given twice")
        models[name] = ini
    s = Moses1Sweep(models=models, input=args.input, workdir=args.workdir, sentences=args.sentences,
                    threads=parse_int_list(args.threads),
                    phrase_tables=[x for x in args.phrase_tables.split(",") if x],
                    reorderings=[x for x in args.reorderings.split(",") if x], search=args.search,
                    stack_size=args.stack_size, pop_limit=args.pop_limit, repeats=args.repeats,
                    protocol=Protocol.from_args(args))
    run_sweep(s, args.out, progress=args.progress)
    return 0
