"""`smtbench bench mediani_scoring` (old name: `bench tmscore`): Mediani Tables 1, 3 and 4 analogues on this
machine; `smtbench bench mediani_scoring_bleu` (old name: `bench tmscore-bleu`): Table 2 (:func:`run_bleu`).

Every measurement runs as a child process (`smtbench tm score ...`), timed by wall clock with its peak RSS
from wait4(); repeats are interleaved over the points. Correctness is checked inside the benchmark: every
table of a corpus fraction must equal the pandas oracle's (when the oracle runs for that fraction) or else
the first table of that fraction (same pairs, scores within 1e-6), and all of ours must be byte-identical.

System ``moses`` is the live *core* baseline: Moses' own ``score`` (once per direction, the inverse with
--Inverse) and ``consolidate`` with GNU sort between (`smtbench tm score-moses`: sort -> score -> score --Inverse ->
sort -> consolidate on plain files), at each thread count, on the same fraction files as ours (system ``ours``:
`tm score` on the same plain files). System ``moses-e2e`` is the live *end-to-end* baseline, as a Moses user runs
it: ``train-model.perl --first-step 4 --last-step 7 --reordering msd-bidirectional-fe`` (lexical tables,
extract-parallel.perl with the orientations, score-parallel.perl, consolidate, lexical-reordering-score; gzip, or pigz
where installed, at every step; ``--cores`` = our threads) on the corpus and alignment (``--src/--tgt/--align``),
beside ``ours-e2e``: `tm extract --phrase-table --reordering-table --threads N` (one process), which writes the same
``phrase-table.gz`` and ``reordering-table.wbe-msd-bidirectional-fe.gz`` from the same input; both at the full corpus
and the most threads (the workflow times these two in a run of their own: rule mediani_e2e_bench). Both tables are compared with ours pair by pair in the first
repeat (:func:`smtbench.tm.model.compare_tables`: same pairs, alignments, counts, scores to printed precision);
any difference stops the run with one line (:class:`smtbench.errors.ResultMismatch`: a time beside a peer that
computed something else is no ratio). With ``--src/--tgt/--align``, Moses' ``extract`` also runs once on the whole
corpus, and its extract files must equal ours (as sorted multisets of lines), or the run stops likewise. Where
Moses' programs are not built, each Moses point gets one row with ``status`` = moses_peer.NOT_BUILT.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import argparse

from ..benchutil import RowWriter, parse_size
from ..errors import PeerFailed, ResultMismatch
from ..ioutil import atomic_open, open_text
from ..ioutil import words as split_words
from .harness import (Protocol, Ratio, Task, must_agree, not_built, peer_missing,
                      progress as progress_bar, rows as open_rows)
from .. import procs

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verbs and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from them, and the config schema's `mediani_scoring` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("mediani_scoring", ("tmscore",),
         help="phrase scoring: ours vs in-memory vs sort pipeline (Mediani)",
         settings=(
             arg("--extract", required=True),
             arg("--extract-inv", required=True),
             arg("--lex-f2e", required=True),
             arg("--lex-e2f", required=True),
             arg("--workdir", required=True, help="inputs per fraction, tables, sorted runs"),
             arg("--fractions", default="0.25,0.5,1,4", config=True, grid=True,
                 help="corpus fractions; integers > 1 replicate"),
             arg("--threads", default="1,2", config=True, grid=True),
             arg("--memory", default="64M,256M", help="our sort budgets", config=True, grid=True),
             arg("--systems", default="ours,memory,sort,moses,moses-e2e,ours-e2e", config=True, grid=True,
                 help="ours, memory (pandas), sort (Moses-style pipeline in C), moses (Moses' score + "
                      "consolidate: the core), moses-e2e (train-model.perl steps 4-7) and ours-e2e (tm extract + "
                      "tm score), the last two from --src/--tgt/--align"),
             arg("--src", help="source corpus (F): with --tgt and --align, Moses' extract runs once and its "
                               "extract files are checked against --extract/--extract-inv"),
             arg("--tgt", help="target corpus (E)"),
             arg("--align", help="symmetrised alignment (F-E points)"),
             arg("--memory-max-fraction", type=float, default=1.0, config=True,
                 help="run pandas only up to this fraction"),
             arg("--sort-memory", default="256M"),
             arg("--partitions", default="1,2,4", config=True, grid=True,
                 help="distributed form (§3.3); empty for none"),
             arg("--partition-fraction", type=float, default=1.0),
             protocol(repeats=2),
             arg("--out", help="rows (JSON lines), written atomically"),
             arg("--progress", action="store_true"),
             key("workflow_partitions", 4, type=int,
                 help="the workflow's partitions of the phrase table (tm_train.smk)"),
         )),
    Verb("mediani_scoring_bleu", ("tmscore-bleu",),
         help="Mediani Table 2: BLEU of our cube decoder with Moses' phrase table and with ours",
         settings=(
             arg("--extract", required=True),
             arg("--extract-inv", required=True),
             arg("--lex-f2e", required=True),
             arg("--lex-e2f", required=True),
             arg("--ours", required=True, help="our phrase table (`tm score` on the same extract)"),
             arg("--reordering-table", required=True),
             arg("--lm", required=True, help="ARPA LM"),
             arg("--order", type=int, required=True),
             arg("--input", required=True, help="source sentences"),
             arg("--reference", required=True),
             arg("--sentences", type=int, default=0, help="the first N lines (0 = all)", config="bleu_sentences"),
             arg("--pop-limit", type=int, default=400),
             arg("-s", "--stack-size", type=int, default=400),
             arg("--threads", type=int, default=1, help="Moses' scoring (as `tm score-moses --threads`)"),
             arg("--memory", default="256M", help="sort -S of Moses' pipeline"),
             arg("--workdir", required=True, help="Moses' table, the filtered tables and models, the outputs"),
             arg("--out", required=True, help="rows (JSON lines)"),
             key("bleu_lm", help="Table 2: the LM (a name of lm_models) of the decoded model"),
         ),
         run="main_bleu"),
    Verb("mediani_scoring_reorder", (),
         help="the reordering table alone: ours (`tm reorder`) vs Moses' lexical-reordering-score, same input",
         description="Both score the same orientation file (the sweep's extraction, sorted once, untimed, into "
                     "extract.o.sorted.gz: what train-model.perl's step 7 reads) into "
                     "reordering-table.wbe-msd-bidirectional-fe.gz, as a child process each, repeats interleaved; "
                     "Moses' program (one thread: it has no threads option) once per repeat, ours at every "
                     "--threads count (the ratio divides ours at 1 thread by it); both tables compared pair by pair "
                     "(the six scores to printed precision) in the first repeat, ours byte for byte across thread "
                     "counts.",
         settings=(
             arg("--orientations", required=True, help="extract.o (plain or .gz) of the sweep's extraction"),
             arg("--workdir", required=True, help="the sorted input and the tables"),
             arg("--threads", default="1,2", config=True, grid=True),
             protocol(repeats=5),
             arg("--out", required=True, help="rows (JSON lines), written atomically"),
             arg("--progress", action="store_true"),
         ),
         run="main_reorder"),
)


@dataclass
class TmScoreSweep:
    extract: str
    extract_inv: str
    lex_f2e: str
    lex_e2f: str
    workdir: str
    fractions: list[float] = field(default_factory=lambda: [0.25, 0.5, 1.0, 4.0])
    threads: list[int] = field(default_factory=lambda: [1, 2])
    memory: list[str] = field(default_factory=lambda: ["64M", "256M"])
    systems: list[str] = field(default_factory=lambda: ["ours", "memory", "sort"])
    memory_max_fraction: float = 1.0      # the pandas baseline only up to this fraction
    sort_memory: str = "256M"
    partitions: list[int] = field(default_factory=lambda: [1, 2, 4])
    partition_fraction: float = 1.0
    repeats: int = 2
    src: str | None = None                # corpus + symmetrised alignment: Moses' extract, checked against ours
    tgt: str | None = None
    align: str | None = None
    protocol: Protocol | None = None  # the repeat protocol (default: exactly `repeats` alternating repeats)

    def proto(self) -> Protocol:
        return self.protocol or Protocol(repeats=self.repeats)

    def validate(self) -> None:
        for p in (self.extract, self.extract_inv, self.lex_f2e, self.lex_e2f):
            if not os.path.exists(p):
                raise FileNotFoundError(f"{p}: no such file")
        if any(f <= 0 for f in self.fractions):
            raise ValueError(f"fractions must be > 0: {self.fractions}")
        if any(t < 1 for t in self.threads) or self.repeats < 1:
            raise ValueError("threads and repeats must be >= 1")
        bad = set(self.systems) - set(SYSTEMS)
        if bad:
            raise ValueError(f"unknown systems {sorted(bad)}")
        for m in self.memory + [self.sort_memory]:
            parse_size(m)
        self.proto().validate()
        given = [p for p in (self.src, self.tgt, self.align) if p]
        if given and len(given) != 3:
            raise ValueError("--src, --tgt and --align go together (Moses' extract needs all three)")
        e2e = [x for x in self.systems if x in E2E]
        if e2e and not given:
            raise ValueError(f"systems {', '.join(e2e)} start from the corpus: give --src, --tgt and --align")
        for p in given:
            if not os.path.exists(p):
                raise FileNotFoundError(f"{p}: no such file")


SYSTEMS = ("ours", "memory", "sort", "moses", "moses-e2e", "ours-e2e")
#: the end-to-end systems: from corpus + alignment to phrase-table.gz (full corpus, the most threads)
E2E = ("moses-e2e", "ours-e2e")


def _make_fraction(src: str, dst: Path, frac: float, total: int) -> None:
    """The first frac of the lines (frac <= 1), or the whole file replicated frac times (integer frac > 1)."""
    if dst.exists():
        return
    with atomic_open(dst) as fo:
        if frac <= 1:
            n = int(total * frac)
            with open_text(src) as fi:
                for i, line in enumerate(fi):
                    if i >= n:
                        break
                    fo.write(line)
        else:
            if frac != int(frac):
                raise ValueError(f"a replication factor must be an integer: {frac}")
            for _ in range(int(frac)):
                with open_text(src) as fi:  # (TextLines: lines, no read(size))
                    fo.writelines(fi)


def _run(cmd: list[str]) -> tuple[float, int]:
    """(seconds, peak RSS bytes) of one command. The peak comes from GNU time (`/usr/bin/time -f %M`): a
    child forked from this (large) interpreter would inherit its high-water mark in wait4's ru_maxrss."""
    import tempfile
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as tf:
        t0 = time.perf_counter()
        proc = procs.run(["/usr/bin/time", "-f", "%M", "-o", tf.name, *cmd], stdout=subprocess.DEVNULL, group=True)
        dt = time.perf_counter() - t0
        if proc.returncode:
            raise PeerFailed(f"{' '.join(cmd)} failed with status {proc.returncode}")
        rss = int(tf.read().split()[-1]) * 1024
    return dt, rss


def _run_together(cmds: list[list[str]]) -> tuple[float, list[float], int]:
    """Commands side by side: (wall seconds of all of them, each one's seconds, the largest peak RSS in bytes),
    each timed by GNU time as :func:`_run` does."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix=".together.") as td:
        outs = [Path(td) / f"{i}.time" for i in range(len(cmds))]
        t0 = time.perf_counter()
        running = [procs.Popen(["/usr/bin/time", "-f", "%e %M", "-o", str(o), *c], stdout=subprocess.DEVNULL,
                               group=True) for c, o in zip(cmds, outs)]
        codes = [p.wait() for p in running]
        dt = time.perf_counter() - t0
        for c, code in zip(cmds, codes):
            if code:
                raise PeerFailed(f"{' '.join(c)} failed with status {code}")
        each = [split_words(o.read_text())[-2:] for o in outs]  # GNU time's "%e %M"
    return dt, [float(e) for e, _ in each], max(int(m) for _, m in each) * 1024


def _e2e_dir(work: Path, system: str) -> Path:
    return work / "e2e" / system


E2E_RT = "reordering-table.wbe-msd-bidirectional-fe.gz"  # train-model.perl's name for msd-bidirectional-fe


def _e2e_table(work: Path, system: str, name: str = "phrase-table.gz") -> Path:
    """Where an end-to-end system writes a table (train-model.perl: <model-dir>/<name>)."""
    d = _e2e_dir(work, system) / "out"
    return d / "model" / name if system == "moses-e2e" else d / name


def e2e_commands(s: TmScoreSweep, system: str, threads: int, work: Path, smt: list[str]) -> list[str]:
    """The end-to-end pipeline of ``system`` as one command line (its steps joined by &&): Moses' train-model.perl
    steps 4-7 (its own lexical tables, extract-parallel.perl with orientations, score-parallel.perl, consolidate,
    lexical-reordering-score for msd-bidirectional-fe; ``--cores`` and ``--sort-parallel`` = threads,
    ``--sort-buffer-size`` = the sort budget), or ours: `tm extract --phrase-table --reordering-table` (one
    process: the lexical tables counted in a first pass, then each phrase pair handed to the scorer as a record and
    its orientations to the reordering counter; no extract file at all)."""
    from .. import moses_peer
    d = _e2e_dir(work, system)
    out = d / "out"
    if system == "ours-e2e":
        steps = [smt + ["tm", "extract", "--src", s.src, "--tgt", s.tgt, "--align", s.align, "--outdir", str(out),
                        "--max-length", "7", "--quiet", "--phrase-table", str(out / "phrase-table.gz"),
                        "--reordering-table", str(out / E2E_RT), "--threads", str(threads),
                        "--memory", s.sort_memory, "--tmpdir", str(out)]]
    else:
        perl = moses_peer.training_root(work / "moses-root")
        inp = d / "in"  # the corpus and alignment under train-model.perl's names (links)
        inp.mkdir(parents=True, exist_ok=True)
        for name, src in (("train.f", s.src), ("train.e", s.tgt), ("aligned.grow-diag-final-and", s.align)):
            link = inp / name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(Path(src).resolve())  # type: ignore[arg-type]
        steps = [["perl", str(perl), "--root-dir", str(out), "--model-dir", str(out / "model"),
                  "--corpus", str(inp / "train"), "--f", "f", "--e", "e",
                  "--alignment", "grow-diag-final-and", "--alignment-file", str(inp / "aligned"),
                  "--first-step", "4", "--last-step", "7", "--max-phrase-length", "7",
                  "--reordering", "msd-bidirectional-fe",
                  "--cores", str(threads), "--sort-parallel", str(threads),
                  "--sort-buffer-size", s.sort_memory,
                  "--external-bin-dir", str(perl.parents[2] / "bin")]]  # (steps 1-3's GIZA++ folder: unused)
    return [" ".join(shlex.quote(str(x)) for x in c) for c in steps]


def _run_e2e(s: TmScoreSweep, p: dict, work: Path, smt: list[str]) -> tuple[float, int, dict]:
    """One end-to-end run from an empty output folder (removed before, untimed): (seconds, peak RSS, fields)."""
    d = _e2e_dir(work, p["system"])
    shutil.rmtree(d / "out", ignore_errors=True)
    (d / "out" / ("model" if p["system"] == "moses-e2e" else "")).mkdir(parents=True)  # train-model.perl's step 4
    # writes into --model-dir without creating it (step 1 would have)
    log = d / "log"
    cmd = " && ".join(e2e_commands(s, p["system"], int(p["threads"]), work, smt))
    try:
        secs, rss = _run(["bash", "-o", "pipefail", "-c", f"( {cmd} ) > {shlex.quote(str(log))} 2>&1"])
    except PeerFailed:
        tail = log.read_text(errors="replace").strip().split("\n")[-3:] if log.exists() else []
        raise PeerFailed(f"{p['system']}: the end-to-end pipeline failed: {' | '.join(tail)} (log: {log})") \
            from None
    table = _e2e_table(work, p["system"])
    for t in (table, _e2e_table(work, p["system"], E2E_RT)):
        if not t.is_file():
            raise PeerFailed(f"{p['system']}: failed: it exited without writing {t} (log: {log})")
    extra: dict = {"table_bytes": table.stat().st_size,
                   "reordering_table_bytes": _e2e_table(work, p["system"], E2E_RT).stat().st_size,
                   "pipeline": cmd.replace(str(work) + "/", "")[:2000]}
    if p["system"] == "moses-e2e":
        extra.update(pigz="present" if shutil.which("pigz") else "absent (gzip)", cores=int(p["threads"]),
                     moses_steps="train-model.perl --first-step 4 --last-step 7 --reordering msd-bidirectional-fe")
    else:
        from ..ioutil import GZIP_BACKEND, TABLE_GZ_LEVEL
        extra.update(steps="tm extract --phrase-table --reordering-table",
                     deflate=GZIP_BACKEND,  # our .gz reader and writer (ISA-L's)
                     extract_file="none (pairs handed to the scorer as records)",  # no intermediate extract at all
                     tables_gz_level=TABLE_GZ_LEVEL,  # zlib's level our two tables are written at (ISA-L's nearest)
                     lexical_tables="counted in the extraction's pass (C)")
    return secs, rss, extra


def _gz_md5(path: Path) -> str:
    import gzip
    h = hashlib.md5()
    with gzip.open(path, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def _check_e2e(system: str, work: Path, rep: int, kept_tables: dict[str, Path], planned: set[str],
               core_ref: Path | None) -> tuple[str, dict]:
    """The two end-to-end systems' phrase tables and reordering tables compared pair by pair
    (tm.model.compare_tables: pairs, alignments, counts, the four scores; the six orientation scores; to printed
    precision) once both have run in the first repeat, and our phrase table (decompressed) byte for byte with our
    core table of the full corpus where that ran first; a difference stops the run."""
    if rep > 0:
        return "checked in repeat 0", {}
    keep = work / "e2e" / f"{system}.phrase-table.gz"
    os.replace(_e2e_table(work, system), keep)
    os.replace(_e2e_table(work, system, E2E_RT), work / "e2e" / f"{system}.{E2E_RT}")
    kept_tables[system] = keep
    more: dict = {}
    if system == "ours-e2e" and core_ref is not None and core_ref.name.startswith("pt.ours"):
        same = _gz_md5(keep) == _md5(core_ref)
        must_agree(same, f"our end-to-end table {keep} differs from our core table {core_ref} (decompressed)")
        more["same_bytes_as_core"] = core_ref.name
    if set(kept_tables) != set(E2E):
        other = next(x for x in E2E if x != system)
        return ("compared with the other end-to-end table in repeat 0 (that row)" if other in planned else
                f"{other}: not run (not built or not asked for), nothing to compare"), more
    ours, moses = kept_tables["ours-e2e"], kept_tables["moses-e2e"]
    c = _tables_agree(ours, moses, work, "Moses' end-to-end table")
    r = _tables_agree(ours.with_name(f"ours-e2e.{E2E_RT}"), moses.with_name(f"moses-e2e.{E2E_RT}"), work,
                      "Moses' end-to-end reordering table", columns=6)
    more_c = {"e2e_pairs_ours": c["ours"], "e2e_pairs_moses": c["theirs"], "e2e_only_ours": c["only_ours"],
            "e2e_only_moses": c["only_theirs"], "e2e_value_mismatches": c["value_mismatches"],
            "e2e_alignment_mismatches": c["alignment_mismatches"], "e2e_count_mismatches": c["count_mismatches"],
            "e2e_reordering_pairs": r["common"]}
    return (f"end-to-end tables identical ({c['common']} pairs; alignments, counts, scores to printed "
            f"precision; reordering table: {r['common']} pairs, six scores)"), {**more, **more_c}


def _tables_agree(ours: Path, theirs: Path, work: Path, what: str, columns: int = 4) -> dict:
    """Moses' phrase table (``columns`` = 4) or reordering table (6) ``theirs`` against ``ours`` pair by pair
    (tm.model.compare_tables, printed precision): any difference stops the run (ResultMismatch, one line); the
    comparison's counts returned."""
    from ..tm.model import compare_tables
    c = compare_tables(str(ours), str(theirs), columns=columns, tmpdir=str(work))
    bad = c["only_ours"] + c["only_theirs"] + c["value_mismatches"] + c["alignment_mismatches"] + \
        c["count_mismatches"]
    must_agree(bad == 0, f"{what} {theirs} differs from ours ({ours}): {c['only_ours']} pairs only ours, "
                         f"{c['only_theirs']} only Moses', {c['value_mismatches']} score / "
                         f"{c['alignment_mismatches']} alignment / {c['count_mismatches']} count mismatches; "
                         f"e.g. {c['examples'][0] if c['examples'] else ''}")
    return c


def _md5(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for b in iter(lambda: fh.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def run_sweep(s: TmScoreSweep, out: str | None, progress: bool = False) -> list[dict]:
    from ..tm.score import compare_tables, read_table
    s.validate()
    work = Path(s.workdir)
    work.mkdir(parents=True, exist_ok=True)
    with open_text(s.extract) as fh:
        total = sum(1 for _ in fh)
    inputs = {}
    for frac in sorted(set(s.fractions) | {s.partition_fraction}):
        e, ei = work / f"extract.f{frac:g}", work / f"extract.inv.f{frac:g}"
        _make_fraction(s.extract, e, frac, total)
        _make_fraction(s.extract_inv, ei, frac, total)
        inputs[frac] = (e, ei)
    smt = [sys.executable, "-m", "smtbench.cli"]
    lex = ["--lex-f2e", s.lex_f2e, "--lex-e2f", s.lex_e2f]
    points: list[dict] = []
    for frac in s.fractions:
        e, ei = inputs[frac]
        lines = total * frac if frac > 1 else int(total * frac)
        if "ours" in s.systems:
            for t in s.threads:
                for m in s.memory:
                    points.append(dict(system="ours", fraction=frac, threads=t, memory=m, partitions=0,
                                       lines=lines))
        if "sort" in s.systems:
            points.append(dict(system="sort", fraction=frac, threads=1, memory=s.sort_memory, partitions=0,
                               lines=lines))
        if "moses" in s.systems:
            for t in s.threads:
                points.append(dict(system="moses", fraction=frac, threads=t, memory=s.sort_memory, partitions=0,
                                   lines=lines))
        if "memory" in s.systems and frac <= s.memory_max_fraction:
            points.append(dict(system="memory", fraction=frac, threads=1, memory="", partitions=0, lines=lines))
    for system in (x for x in s.systems if x in E2E):
        points.append(dict(system=system, fraction=1.0, threads=max(s.threads), memory=s.sort_memory, partitions=0,
                           lines=total))
    for k in s.partitions:
        points.append(dict(system="distributed", fraction=s.partition_fraction, threads=max(s.threads),
                           memory=s.memory[-1], partitions=k, lines=int(total * min(1.0, s.partition_fraction))
                           if s.partition_fraction <= 1 else total * s.partition_fraction))
    rows: list[dict] = []
    cores = os.cpu_count() or 1
    refs: dict[float, Path] = {}     # the table each fraction's outputs are checked against
    ours_md5: dict[float, str] = {}
    moses_checked: dict[float, dict] = {}  # per fraction: Moses' table digest -> its comparison with ours
    e2e_tables: dict[str, Path] = {}  # the end-to-end systems' first tables, compared once both exist
    with open_rows("mediani_scoring", out) as writer:
        if {"moses", "moses-e2e"} & set(s.systems):
            points = _moses_preamble(s, points, writer, rows, work)
        bar = progress_bar(len(points) * s.repeats, progress, "mediani_scoring")
        planned_e2e = {p["system"] for p in points if p["system"] in E2E}
        def point(p: dict) -> Task:
            def fn(rep: int) -> float:
                frac = p["fraction"]
                e, ei = inputs.get(frac, (None, None))  # (the end-to-end systems start from the corpus)
                tag = f"{p['system']}.f{frac:g}.t{p['threads']}.m{p['memory']}.k{p['partitions']}"
                table = work / f"pt.{tag}.txt"
                extra: dict = {}
                if p["system"] == "ours":
                    secs, rss = _run(smt + ["tm", "score", "--extract", str(e), *lex, "--out", str(table),
                                            "--threads", str(p["threads"]), "--memory", p["memory"],
                                            "--tmpdir", str(work), "--stats", str(table) + ".json"])
                    import json
                    extra = {k: v for k, v in json.loads(Path(str(table) + ".json").read_text()).items()
                             if k in ("runs1", "runs2", "run_bytes", "pairs", "s_load", "s_merge1", "s_merge2",
                                      "buffer_bytes")}
                elif p["system"] == "sort":
                    secs, rss = _run(smt + ["tm", "score-sort", "--extract", str(e), "--extract-inv", str(ei), *lex,
                                            "--out", str(table), "--memory", p["memory"], "--tmpdir", str(work)])
                elif p["system"] == "moses":
                    secs, rss = _run(smt + ["tm", "score-moses", "--extract", str(e), "--extract-inv", str(ei), *lex,
                                            "--out", str(table), "--threads", str(p["threads"]),
                                            "--memory", p["memory"], "--tmpdir", str(work),
                                            "--stats", str(table) + ".json"])
                    import json
                    extra = json.loads(Path(str(table) + ".json").read_text())
                elif p["system"] == "memory":
                    secs, rss = _run(smt + ["tm", "score-memory", "--extract", str(e), *lex, "--out", str(table)])
                elif p["system"] in E2E:
                    secs, rss, extra = _run_e2e(s, p, work, smt)
                    check, more = _check_e2e(p["system"], work, rep, e2e_tables, planned_e2e, refs.get(1.0))
                    extra.update(more)
                    rows.append(writer.emit(**p, repeat=rep, seconds=secs, peak_rss_bytes=rss,
                                            lines_per_s=p["lines"] / secs, check=check, **extra))
                    return secs * 1e9
                else:  # distributed: partition, score partitions with partial counts, merge
                    k = p["partitions"]
                    pdir = work / f"dist{k}"
                    pdir.mkdir(exist_ok=True)
                    t_part, rss = _run(smt + ["tm", "partition", "--extract", str(e), "--parts", str(k),
                                              "--outdir", str(pdir)])
                    part_cmds = [smt + ["tm", "score", "--extract", str(pdir / f"part{i}.extract.gz"), *lex,
                                        "--out", str(pdir / f"part{i}.counts.gz"), "--counts",
                                        "--threads", str(max(1, p["threads"] // k) if k <= cores else p["threads"]),
                                        "--memory", p["memory"], "--tmpdir", str(pdir)] for i in range(k)]
                    if 1 < k <= cores:
                        # k parts side by side on k of the machine's cores (threads shared out): the critical path
                        # is measured; more parts than cores would measure contention, so those run one after
                        # another and their critical path is a projection (the report gives it no ratio)
                        t_parts, part_secs, r = _run_together(part_cmds)
                        extra_dist = dict(parts_parallel=True, part_threads=max(1, p["threads"] // k),
                                          s_parts_wall=t_parts)
                    else:
                        part_secs, r = [], 0
                        for c in part_cmds:
                            dt, r1 = _run(c)
                            part_secs.append(dt)
                            r = max(r, r1)
                        t_parts = sum(part_secs) if k > 1 else part_secs[0]
                        extra_dist = dict(parts_parallel=False, part_threads=int(p["threads"]))
                    rss = max(rss, r)
                    t_merge, r = _run(smt + ["tm", "score", "--weighted", "--extract",
                                             *[str(pdir / f"part{i}.counts.gz") for i in range(k)], *lex,
                                             "--out", str(table), "--threads", str(p["threads"]),
                                             "--memory", p["memory"], "--tmpdir", str(pdir)])
                    rss = max(rss, r)
                    secs = t_part + t_parts + t_merge
                    crit = t_part + (t_parts if extra_dist["parts_parallel"] else max(part_secs)) + t_merge
                    extra = dict(s_partition=t_part, s_partitions_sum=sum(part_secs),
                                 s_partition_max=max(part_secs), s_merge=t_merge, s_critical_path=crit, **extra_dist)
                # correctness, inside the benchmark
                if p["system"] in ("ours", "distributed"):
                    md5 = _md5(table)
                    must_agree(ours_md5.setdefault(frac, md5) == md5,
                               f"{table}: differs from our other tables of fraction {frac}")
                    # same bytes for every thread count/budget of this run (checked above); across runs the
                    # table changes with the (unseeded) alignment, so metrics count distinct digests only
                    extra["table_md5"] = md5
                if frac not in refs:
                    refs[frac] = table
                    check = "reference"
                elif p["system"] == "moses":
                    check, more = _check_moses(table, refs[frac], rep, work, moses_checked.setdefault(frac, {}))
                    extra.update(more)
                elif p["system"] == "ours" and refs[frac].name.startswith("pt.ours"):
                    check = "md5"
                elif rep > 0 and p["system"] != "ours":
                    check = "checked in repeat 0"  # deterministic programs: one full comparison per point
                else:
                    diff = compare_tables(read_table(str(table)), read_table(str(refs[frac])))
                    check = f"equal to {refs[frac].name} (max score diff {max(diff.values()):.2g})"
                rows.append(writer.emit(**p, repeat=rep, seconds=secs, peak_rss_bytes=rss,
                                        lines_per_s=p["lines"] / secs, check=check, **extra))
                if table != refs[frac]:
                    table.unlink()  # checked; keep only each fraction's reference table on disk
                return secs * 1e9
            return Task(f"{p['system']}.f{p['fraction']:g}.t{p['threads']}.m{p['memory']}.k{p['partitions']}", fn)

        # every point once per repeat, alternating or shuffled (smtbench.protocol); headline ratios of the adaptive
        # stop: ours (most threads) against the sort pipeline and against Moses (most threads) on the largest fraction
        tasks = [point(p) for p in points]
        keys = {t.key for t in tasks}
        fmax, tmax = max(s.fractions), max(s.threads)
        ours_k = f"ours.f{fmax:g}.t{tmax}.m{s.memory[0]}.k0"
        sort_k = f"sort.f{fmax:g}.t1.m{s.sort_memory}.k0"
        moses_k = f"moses.f{fmax:g}.t{tmax}.m{s.sort_memory}.k0"
        e2e_k = {x: f"{x}.f1.t{tmax}.m{s.sort_memory}.k0" for x in E2E}
        ratios = [Ratio.speedup(name, ours_k, k) for name, k in (("speedup_vs_sort", sort_k),
                                                                  ("speedup_vs_moses", moses_k))
                  if {ours_k, k} <= keys]
        if set(e2e_k.values()) <= keys:
            ratios.append(Ratio.speedup("speedup_vs_moses_e2e", e2e_k["ours-e2e"], e2e_k["moses-e2e"]))
        Sweep("mediani_scoring", s.proto(), writer, ratios=ratios, progress=bar).add(
            *tasks, peers=[t.key for t in tasks if t.key.startswith(("moses.", "moses-e2e."))]).run()
        bar.close()
    return rows


MOSES_POINT_PROGRAMS = ("score", "consolidate")


def _moses_preamble(s: TmScoreSweep, points: list[dict], writer: RowWriter, rows: list[dict],
                    work: Path) -> list[dict]:
    """Before the timed repeats: Moses' ``extract`` on the whole corpus checked against our extract files (when
    the corpus is given), and one ``status`` row per Moses point whose programs are missing (the point is then
    dropped from the timed list, never silently)."""
    from .. import moses_peer
    if s.src:
        if not peer_missing("extract"):
            rows.append(writer.emit(**_moses_extract_check(s, work)))
        else:
            rows.append(not_built(writer, system="moses-extract", repeat=0))
    drop = set()
    for system, missing in (("moses", peer_missing(*MOSES_POINT_PROGRAMS)),
                            ("moses-e2e", moses_peer.training_missing())):
        if not missing or not any(p["system"] == system for p in points):
            continue
        drop.add(system)
        for p in points:
            if p["system"] == system:
                rows.append(not_built(writer, missing, **p, repeat=0))
        print(f"bench mediani_scoring: Moses' {', '.join(missing)} not built in {moses_peer.bin_dir()} / "
              f"{moses_peer.scripts_dir()}: its {system} rows read {moses_peer.NOT_BUILT!r}", file=sys.stderr)
    return [p for p in points if p["system"] not in drop]


def _sorted_lines(path: str, dst: Path, tmpdir: Path) -> None:
    """``LC_ALL=C sort`` of a (plain, .gz or .xz) file into dst; the input read by ioutil.decompressed_fd (this
    package's one reader of compressed files: a corrupt one is one line naming it)."""
    from ..ioutil import decompressed_fd
    with decompressed_fd(path) as fd, open(dst, "wb") as out:
        r = procs.run(["sort", "-S", "256M", "-T", str(tmpdir)], stdin=fd, stdout=out,
                      env=dict(os.environ, LC_ALL="C"), stderr=subprocess.PIPE, group=True)
    if r.returncode:
        raise PeerFailed(f"sorting {path} failed: {r.stderr.decode(errors='replace').strip()[-300:]}")


def multiset_diff(a: str, b: str, tmpdir: Path, examples: int = 5) -> dict:
    """Two files as multisets of lines: counts of lines only in one of them (with a few examples)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix=".msdiff.", dir=tmpdir) as td:
        sa, sb = Path(td) / "a", Path(td) / "b"
        _sorted_lines(a, sa, Path(td))
        _sorted_lines(b, sb, Path(td))
        na = nb = oa = ob = 0
        ex: list[str] = []
        with open(sa, "rb") as fa, open(sb, "rb") as fb:
            x, y = fa.readline(), fb.readline()
            while x or y:
                if x and (not y or x < y):
                    oa += 1; na += 1  # noqa: E702
                    if len(ex) < examples:
                        ex.append("only in " + a + ": " + x.decode(errors="replace").rstrip("\n"))
                    x = fa.readline()
                elif y and (not x or y < x):
                    ob += 1; nb += 1  # noqa: E702
                    if len(ex) < examples:
                        ex.append("only in " + b + ": " + y.decode(errors="replace").rstrip("\n"))
                    y = fb.readline()
                else:
                    na += 1; nb += 1  # noqa: E702
                    x, y = fa.readline(), fb.readline()
    return {"lines_a": na, "lines_b": nb, "only_a": oa, "only_b": ob, "examples": ex}


def _moses_extract_check(s: TmScoreSweep, work: Path) -> dict:
    """Moses' ``extract <E> <F> <align> <out> 7`` (as train-model.perl calls it, without orientation) on the whole
    corpus, timed once; its extract and extract.inv compared with ours as multisets of lines."""
    from .. import moses_peer
    outdir = work / "moses-extract"
    outdir.mkdir(parents=True, exist_ok=True)
    prefix = outdir / "extract"
    secs, rss = _run([str(moses_peer.program("extract")), str(s.tgt), str(s.src), str(s.align), str(prefix), "7"])
    d = multiset_diff(s.extract, str(prefix), work)
    di = multiset_diff(s.extract_inv, str(prefix) + ".inv", work)
    same = d["only_a"] == d["only_b"] == di["only_a"] == di["only_b"] == 0
    must_agree(same, f"Moses' extract {prefix} differs from ours ({s.extract}): "
                     + " | ".join((d["examples"] + di["examples"])[:2]))
    row = dict(system="moses-extract", repeat=0, seconds=secs, peak_rss_bytes=rss, lines=d["lines_b"],
               extract_lines_ours=d["lines_a"], extract_lines_moses=d["lines_b"], extract_only_ours=d["only_a"],
               extract_only_moses=d["only_b"], extract_inv_only_ours=di["only_a"],
               extract_inv_only_moses=di["only_b"],
               check="identical to ours (extract and extract.inv, as sorted multisets of lines)")
    for f in (prefix, Path(str(prefix) + ".inv")):
        f.unlink(missing_ok=True)
    return row


def _check_moses(table: Path, ref: Path, rep: int, work: Path, checked: dict) -> tuple[str, dict]:
    """Moses' table against the fraction's reference (ours): pair sets, alignments, counts and the four scores to
    printed precision, once per distinct table (``checked``: digest -> result; Moses' other thread counts and
    repeats write the same bytes, which the digest shows)."""
    md5 = _md5(table)
    if md5 in checked:
        check, more = checked[md5]
        return ("same bytes as Moses' table checked above: " + check if rep == 0 else "checked in repeat 0"), \
            ({**more} if rep == 0 else {"moses_table_md5": md5})
    c = _tables_agree(ref, table, work, "Moses' table")
    more = {"moses_table_md5": md5, "pairs_ours": c["ours"], "pairs_moses": c["theirs"],
            "only_ours": c["only_ours"], "only_moses": c["only_theirs"], "value_mismatches": c["value_mismatches"],
            "alignment_mismatches": c["alignment_mismatches"], "count_mismatches": c["count_mismatches"]}
    check = f"identical to {ref.name} ({c['common']} pairs; alignments, counts, scores to printed precision)"
    checked[md5] = (check, more)
    return check, more


# ------------------------------------------------------------------ Table 2: BLEU with Moses' table and ours
@dataclass
class TmBleuRun:
    extract: str
    extract_inv: str
    lex_f2e: str
    lex_e2f: str
    ours: str                 # our phrase table (the workflow's `tm score` output)
    reordering_table: str
    lm: str
    order: int
    input: str
    reference: str
    workdir: str
    sentences: int = 0
    pop_limit: int = 400
    stack_size: int = 400
    threads: int = 1          # Moses' scoring (sort --parallel, directions side by side)
    memory: str = "256M"


def run_bleu(r: TmBleuRun, out: str) -> list[dict]:
    """Mediani Table 2: Moses' `score`/`consolidate` make a phrase table from the same extract and lex files as
    ours; each table, filtered to the input as filter-model-given-input.pl does, goes into the same moses.ini
    (`tm model`'s, default weights, our reordering table and LM) and our cube decoder translates the input with
    it. One row per table: BLEU (sacrebleu, --tokenize none), the mean model score, the 1-best digest, and for
    Moses' table its pair-by-pair comparison with ours. Without Moses' programs its row reads NOT_BUILT."""
    from .. import moses_peer
    from ..decode.compare import best_of, bleu, read_lines
    from ..decode.cube import CubeDecoder
    from ..decode.model import PhraseModel
    from ..tm.model import compare_tables, filter_table, input_phrases, write_ini
    from ..tm.score import MOSES_SCORE_PROGRAMS, score_moses

    for p in (r.extract, r.extract_inv, r.lex_f2e, r.lex_e2f, r.ours, r.reordering_table, r.lm, r.input,
              r.reference):
        if not os.path.exists(p):
            raise FileNotFoundError(f"{p}: no such file")
    if r.sentences < 0:
        raise ValueError(f"--sentences {r.sentences}: must be >= 0")
    work = Path(r.workdir)
    work.mkdir(parents=True, exist_ok=True)
    src, refs = read_lines(r.input), read_lines(r.reference)
    if len(src) != len(refs):
        raise ValueError(f"{r.reference}: {len(refs)} lines but {r.input} has {len(src)}")
    n = r.sentences or len(src)
    src, refs = src[:n], refs[:n]
    inp = work / "input"
    with atomic_open(inp) as fo:
        fo.write("".join(x + "\n" for x in src))
    phrases = input_phrases([str(inp)])
    rt = work / "reordering-table.gz"
    filter_table(r.reordering_table, str(rt), phrases)
    tables: dict[str, str] = {"ours": r.ours}
    base = dict(sentences=n, pop_limit=r.pop_limit, stack_size=r.stack_size, source_words=sum(len(split_words(x))
                                                                                              for x in src))
    rows: list[dict] = []
    with atomic_open(out, "w") as fh:
        writer = RowWriter("mediani_bleu", fh)
        missing = [p for p in MOSES_SCORE_PROGRAMS if not moses_peer.available(p)]
        moses_row: dict = dict(table="moses", scorer="Moses score + consolidate")
        if missing:
            moses_row["status"] = moses_peer.NOT_BUILT
        else:
            mt = work / "moses" / "phrase-table.gz"
            stages = score_moses(r.extract, r.extract_inv, r.lex_f2e, r.lex_e2f, str(mt), threads=r.threads,
                                 memory=parse_size(r.memory), tmpdir=str(work))
            c = compare_tables(r.ours, str(mt), columns=4, tmpdir=str(work))
            bad = c["only_ours"] + c["only_theirs"] + c["value_mismatches"] + c["alignment_mismatches"] + \
                c["count_mismatches"]
            moses_row.update(pairs=c["theirs"], seconds=sum(stages.values()), **stages,
                             table_check=(f"identical to ours ({c['common']} pairs)" if not bad else
                                          f"differs from ours: {json.dumps({k: v for k, v in c.items()})}"))
            tables["moses"] = str(mt)
        for name in ("ours", "moses"):
            row = dict(table=name, scorer="smtbench tm score") if name == "ours" else moses_row
            if name in tables:
                d = work / name
                d.mkdir(parents=True, exist_ok=True)
                kept, _ = filter_table(tables[name], str(d / "phrase-table.gz"), phrases)
                write_ini(d / "moses.ini", "phrase-table.gz", os.path.relpath(Path(r.lm).resolve(), d.resolve()),
                          r.order, os.path.relpath(rt.resolve(), d.resolve()))
                model = PhraseModel(str(d / "moses.ini"))
                best, scores = best_of(CubeDecoder(model, pop_limit=r.pop_limit, stack_size=r.stack_size), src,
                                       str(inp))
                with atomic_open(d / "out.1best") as fo:
                    fo.write("".join(x + "\n" for x in best))
                row.update(filtered_pairs=kept, bleu=round(bleu(best, refs), 2),
                           mean_model_score=round(sum(scores) / max(1, len(scores)), 6),
                           output_sha=hashlib.sha256("\n".join(best).encode()).hexdigest()[:16])
                if name == "ours":
                    row.setdefault("pairs", None)
            rows.append(writer.emit(**base, **row))
    return rows


def _floats(t: str) -> list[float]:
    return [float(x) for x in t.split(",") if x.strip()]


def main(args: argparse.Namespace) -> int:
    """`bench mediani_scoring` (options: VERBS above)."""
    from ..benchutil import parse_int_list
    s = TmScoreSweep(
        extract=args.extract, extract_inv=args.extract_inv, lex_f2e=args.lex_f2e, lex_e2f=args.lex_e2f,
        workdir=args.workdir, fractions=_floats(args.fractions), threads=parse_int_list(args.threads),
        memory=[m for m in args.memory.split(",") if m], systems=[x for x in args.systems.split(",") if x],
        memory_max_fraction=args.memory_max_fraction, sort_memory=args.sort_memory,
        partitions=parse_int_list(args.partitions) if args.partitions.strip() else [],
        partition_fraction=args.partition_fraction, repeats=args.repeats, src=args.src, tgt=args.tgt,
        align=args.align, protocol=Protocol.from_args(args))
    run_sweep(s, args.out, progress=args.progress)
    return 0


def main_bleu(args: argparse.Namespace) -> int:
    """`bench mediani_scoring_bleu` (options: VERBS above)."""
    if not 1 <= args.order <= 8:
        raise ValueError(f"--order {args.order}: must be in 1..8")
    run_bleu(TmBleuRun(extract=args.extract, extract_inv=args.extract_inv, lex_f2e=args.lex_f2e,
                       lex_e2f=args.lex_e2f, ours=args.ours, reordering_table=args.reordering_table, lm=args.lm,
                       order=args.order, input=args.input, reference=args.reference, workdir=args.workdir,
                       sentences=args.sentences, pop_limit=args.pop_limit, stack_size=args.stack_size,
                       threads=args.threads, memory=args.memory), args.out)
    return 0


# ------------------------------------------------------ the reordering table alone: ours vs lexical-reordering-score
REORDER_MODEL = "wbe msd wbe-msd-bidirectional-fe"  # train-model.perl's --model for msd-bidirectional-fe
REORDER_SMOOTHING = "0.5"  # train-model.perl's default --reordering-smoothing


def reorder_commands(system: str, inp: Path, out_prefix: Path, threads: int, smt: list[str]) -> tuple[list[str], Path]:
    """One system's command and the table it writes: Moses' ``lexical-reordering-score <extract.o.sorted.gz> 0.5
    <prefix> --model "wbe msd wbe-msd-bidirectional-fe"`` (train-model.perl's step 7) or ours, ``tm reorder``."""
    from .. import moses_peer
    table = Path(f"{out_prefix}.wbe-msd-bidirectional-fe.gz")
    if system == "moses-reorder":  # (train-model.perl passes the prefix with its dot: the program appends the type)
        return [str(moses_peer.program("lexical-reordering-score")), str(inp), REORDER_SMOOTHING, f"{out_prefix}.",
                "--model", REORDER_MODEL], table
    return smt + ["tm", "reorder", "--orientations", str(inp), "--out", str(table), "--smoothing", REORDER_SMOOTHING,
                  "--threads", str(threads), "--quiet"], table


def _sorted_gz(src: str, dst: Path, tmpdir: Path) -> None:
    """``LC_ALL=C sort`` of a (plain or .gz) file into a .gz (tm.score.write_parts: ioutil's deflate, published
    whole); kept between runs (its stamp: the source's size and mtime)."""
    from ..tm.score import write_parts
    stamp = dst.with_name(dst.name + ".from")
    key = f"{os.path.abspath(src)} {os.stat(src).st_size} {os.stat(src).st_mtime_ns}"
    if dst.exists() and stamp.exists() and stamp.read_text() == key:
        return
    plain = dst.with_name(dst.name + ".plain")
    _sorted_lines(src, plain, tmpdir)
    write_parts([plain], str(dst), level=6, member_bytes=None)  # (one member, as gzip writes it)
    plain.unlink()
    stamp.write_text(key)


def main_reorder(args: argparse.Namespace) -> int:
    """`bench mediani_scoring_reorder` (options: VERBS above)."""
    from ..benchutil import parse_int_list
    threads = parse_int_list(args.threads, 1, 256, "--threads")
    proto = Protocol.from_args(args)
    proto.validate()
    if os.path.isdir(args.orientations) or not os.path.exists(args.orientations):
        raise FileNotFoundError(f"{args.orientations}: no such file")
    work = Path(args.workdir) / "reorder"
    work.mkdir(parents=True, exist_ok=True)
    smt = [sys.executable, "-m", "smtbench.cli"]
    inp = work / "extract.o.sorted.gz"
    _sorted_gz(args.orientations, inp, work)
    from ..ioutil import open_text
    with open_text(str(inp)) as fh:
        lines = sum(1 for _ in fh)
    missing = peer_missing("lexical-reordering-score")
    points = [("ours-reorder", t) for t in threads] + ([] if missing else [("moses-reorder", 1)])
    tables: dict[str, str] = {}   # system.tN -> digest of the decompressed table (ours: one for all thread counts)
    fresh: set[str] = set()       # the tables written in repeat 0 since the last comparison of ours and Moses
    with open_rows("mediani_reorder", args.out) as writer:
        if missing:
            not_built(writer, missing, system="moses-reorder", threads=1, repeat=0, lines=lines)
        bar = progress_bar(len(points) * proto.repeats, args.progress, "mediani_scoring_reorder")

        def point(system: str, t: int) -> Task:
            key_ = f"{system}.t{t}"

            def fn(rep: int) -> float:
                prefix = work / key_ / "reordering-table"
                prefix.parent.mkdir(exist_ok=True)
                cmd, table = reorder_commands(system, inp, prefix, t, smt)
                table.unlink(missing_ok=True)
                secs, rss = _run(cmd)
                if not table.is_file():
                    raise PeerFailed(f"{system}: exited without writing {table}")
                check = "checked in repeat 0"
                extra: dict = {}
                if rep == 0:
                    tables[key_] = _gz_md5(table)
                    keep = work / f"{key_}.wbe-msd-bidirectional-fe.gz"
                    os.replace(table, keep)
                    if system == "ours-reorder":
                        for other in (k for k in tables if k.startswith("ours-reorder") and k != key_):
                            must_agree(tables[key_] == tables[other],
                                       f"{keep}: differs from our {other} table (decompressed)")
                    check = "kept for the comparison (in the row of whichever of the two ran second)"
                    first_ours = f"ours-reorder.t{threads[0]}"
                    fresh.add(key_)   # (a retaken repeat 0 writes both tables again: compared once an attempt)
                    if {first_ours, "moses-reorder.t1"} <= fresh and key_ in (first_ours, "moses-reorder.t1"):
                        fresh.difference_update({first_ours, "moses-reorder.t1"})
                        c = _tables_agree(work / f"{first_ours}.wbe-msd-bidirectional-fe.gz",
                                          work / "moses-reorder.t1.wbe-msd-bidirectional-fe.gz", work,
                                          "Moses' reordering table", columns=6)
                        check = (f"ours and Moses' identical ({c['common']} pairs, six scores to printed "
                                 f"precision)")
                        extra = {"pairs": c["common"]}
                    extra["table_md5"] = tables[key_]
                writer.emit(system=system, threads=t, repeat=rep, seconds=secs, peak_rss_bytes=rss, lines=lines,
                            lines_per_s=lines / secs, check=check, input=str(inp),
                            command=shlex.join(cmd).replace(str(work) + "/", ""), **extra)
                return secs * 1e9
            return Task(key_, fn)

        tasks = [point(*p) for p in points]
        ratios = [Ratio.speedup("speedup_vs_moses_reorder", "ours-reorder.t1", "moses-reorder.t1")] \
            if not missing and 1 in threads else []
        Sweep("mediani_scoring_reorder", proto, writer, ratios=ratios, progress=bar).add(
            *tasks, peers=[t.key for t in tasks if t.key.startswith("moses-")]).run()
        bar.close()
    return 0
