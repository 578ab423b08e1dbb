"""`smtbench tm train`: a phrase-based model from a parallel corpus in one command, with train-model.perl's habits.

The corpus is ``PREFIX.F`` / ``PREFIX.E`` (one sentence per line, line i of one the translation of line i of the
other); everything goes under ``OUTDIR`` with train-model.perl's file names. Steps, each reusing the module that
does the work (no logic of its own besides the corpus step):

  corpus   optional tokenization (sacremoses), lowercasing or truecasing, and clean-corpus-n.perl's filter
           (drop pairs with a side outside MIN..MAX words or a length ratio above RATIO) -> corpus.clean.{F,E};
           a no-op (the input files are used as they are) when nothing is asked for
  align    eflomal both directions + symmetrization (tm.align) -> aligned.{fwd,rev,HEURISTIC}
  extract  phrase pairs, lexical tables, orientations (tm.extract) -> extract{,.inv,.o}.gz, lex.{f2e,e2f}
  score    phrase table (tm.score, the C scorer) -> phrase-table.gz
  reorder  lexicalized reordering, wbe-msd-bidirectional-fe (tm.reordering) -> reordering-table.*.gz
  lm       the target side's interpolated modified Kneser-Ney LM (lm.estimate) -> lm.arpa.gz, or --lm ARPA
  model    moses.ini beside the tables (tm.model, as `tm model`) -> moses.ini

Resumable: every output is written atomically, and a finished step leaves a stamp ``OUTDIR/.steps/STEP.json``
holding its options and the size and mtime of its inputs and outputs. A step is skipped while its stamp matches
(same options, same inputs, outputs unchanged), so a second run redoes nothing and a changed option or input
redoes that step and those after it (their inputs changed).

Check, then publish: the options, every planned step's inputs and a given --lm (read by the decoders' ARPA reader)
are checked before the first step; each step run holds a lock in OUTDIR (``folderlock``, one per step, so a second
run of a step there is refused naming the holder); moses.ini, the model's publication, is removed before the first
step that rewrites a table or the LM and written last by the model step.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ..ioutil import atomic_open, atomic_write_text, line_count_mismatch, open_text
from ..ioutil import words as split_words, join_words

STEPS = ("corpus", "align", "extract", "score", "reorder", "lm", "model")
CASING = ("keep", "lower", "truecase")
REORDERING_TABLE = "reordering-table.wbe-msd-bidirectional-fe.gz"


class TrainError(ValueError):
    """A training input or option that cannot work (the message names the file or option)."""


@dataclass
class TrainOptions:
    corpus: str
    f: str
    e: str
    outdir: str
    # corpus step
    tokenize: bool = False
    f_lang: str | None = None
    e_lang: str | None = None
    casing: str = "keep"
    min_length: int = 1
    max_length: int = 80
    ratio: float = 9.0
    # align step
    alignment: str = "grow-diag-final-and"
    eflomal_model: int = 3
    eflomal_iterations: int | None = None
    eflomal_samplers: int = 3
    eflomal_null_prior: float = 0.2
    # extract / score / reorder
    max_phrase_length: int = 7
    smoothing: str = "none"
    threads: int = 1
    score_memory: str = "256M"
    reordering: bool = True
    reordering_smoothing: float = 0.5
    # lm
    lm: str | None = None
    lm_order: int = 5
    lm_memory: str = "1G"
    lm_discount_fallback: bool = False
    # model
    model_dir: str | None = None
    distortion_limit: int = 6
    progress: bool = True
    extra: dict = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return self.max_length > 0 or self.ratio > 0 or self.min_length > 1

    @property
    def corpus_step_active(self) -> bool:
        return self.tokenize or self.casing != "keep" or self.clean


def _fp(path: str | os.PathLike[str]) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


@dataclass
class Step:
    name: str
    inputs: list[str]
    outputs: list[str]
    params: dict
    run: Callable[[], dict]


class Trainer:
    def __init__(self, o: TrainOptions):
        self.o = o
        self.out = Path(o.outdir)
        for opt, d in (("--outdir", o.outdir), ("--model-dir", o.model_dir)):
            if d and os.path.lexists(d) and not os.path.isdir(d):
                raise TrainError(f"{opt} {d}: exists and is not a folder")
        self.stamps = self.out / ".steps"
        for side, ext in (("--f", o.f), ("--e", o.e)):
            if not ext or "/" in ext:
                raise TrainError(f"{side} {ext!r}: give the file extension of that side (e.g. {side} de)")
        if o.f == o.e:
            raise TrainError(f"--f and --e are both {o.f!r}: the two sides need different extensions")
        if o.casing not in CASING:
            raise TrainError(f"--casing {o.casing}: one of {', '.join(CASING)}")
        if o.max_length < 0 or o.min_length < 0 or not o.ratio >= 0:  # NaN fails too
            raise TrainError("--min-length, --max-length and --ratio must be >= 0 (0 = no such filter)")
        if not math.isfinite(o.ratio) or 0 < o.ratio < 1:
            raise TrainError(f"--ratio {o.ratio}: must be 0 (no limit) or a finite number >= 1 (a pair's longer side "
                             "is at least as long as its shorter: a ratio below 1 drops every pair)")
        if not 0 < o.eflomal_null_prior < 1:  # the aligner's own range (tm.align), checked before any step runs
            raise TrainError(f"--eflomal-null-prior {o.eflomal_null_prior}: must be a probability in (0, 1)")
        if o.eflomal_samplers < 1:
            raise TrainError(f"--eflomal-samplers {o.eflomal_samplers}: must be >= 1")
        if o.eflomal_iterations is not None and o.eflomal_iterations < 1:
            raise TrainError(f"--eflomal-iterations {o.eflomal_iterations}: must be >= 1")
        if not 1 <= o.threads <= 256:
            raise TrainError(f"--threads {o.threads}: must be in 1..256")
        if not (math.isfinite(o.reordering_smoothing) and o.reordering_smoothing >= 0):
            raise TrainError(f"--reordering-smoothing {o.reordering_smoothing}: must be a finite number >= 0")
        if o.max_phrase_length < 1:
            raise TrainError(f"--max-phrase-length {o.max_phrase_length}: must be >= 1")
        if o.lm is None and not 2 <= o.lm_order <= 6:
            raise TrainError(f"--lm-order {o.lm_order}: must be in 2..6")
        from ..benchutil import parse_size
        parse_size(o.score_memory, "--score-memory", lo=1 << 20)  # the scorer's floor, before the steps before it
        if o.lm is None:
            parse_size(o.lm_memory, "--lm-memory", lo=64 << 20)  # the estimator's floor, named by our option
        self.src_in = f"{o.corpus}.{o.f}"
        self.tgt_in = f"{o.corpus}.{o.e}"
        if o.corpus_step_active:
            self.src = str(self.out / f"corpus.clean.{o.f}")
            self.tgt = str(self.out / f"corpus.clean.{o.e}")
        else:
            self.src, self.tgt = self.src_in, self.tgt_in
        self.align = str(self.out / f"aligned.{o.alignment}")
        self.lm_path = o.lm or str(self.out / "lm.arpa.gz")
        self.model_dir = Path(o.model_dir) if o.model_dir else self.out

    # --- the steps -------------------------------------------------------------------------------------------

    def steps(self) -> list[Step]:
        o, d = self.o, self.out
        ext = [str(d / n) for n in ("extract.gz", "extract.inv.gz", "lex.f2e", "lex.e2f")]
        if o.reordering:
            ext.append(str(d / "extract.o.gz"))
        out = [
            Step("corpus", [self.src_in, self.tgt_in], [self.src, self.tgt] if o.corpus_step_active else [],
                 {k: getattr(o, k) for k in ("tokenize", "f_lang", "e_lang", "casing", "min_length", "max_length",
                                             "ratio")}, self._corpus),
            Step("align", [self.src, self.tgt],
                 [self.align, str(d / "aligned.fwd"), str(d / "aligned.rev")],
                 {k: getattr(o, k) for k in ("alignment", "eflomal_model", "eflomal_iterations", "eflomal_samplers",
                                             "eflomal_null_prior")}, self._align),
            Step("extract", [self.src, self.tgt, self.align], ext,
                 {"max_phrase_length": o.max_phrase_length, "orientation": o.reordering}, self._extract),
            Step("score", [str(d / "extract.gz"), str(d / "lex.f2e"), str(d / "lex.e2f")],
                 [str(d / "phrase-table.gz")], {"smoothing": o.smoothing}, self._score),
            Step("reorder", [str(d / "extract.o.gz")] if o.reordering else [],
                 [str(d / REORDERING_TABLE)] if o.reordering else [],
                 {"reordering": o.reordering, "smoothing": o.reordering_smoothing}, self._reorder),
            Step("lm", [self.tgt] if o.lm is None else [o.lm], [self.lm_path] if o.lm is None else [],
                 {"lm": o.lm, "order": o.lm_order if o.lm is None else None,
                  "discount_fallback": o.lm_discount_fallback}, self._lm),
            Step("model", [str(d / "phrase-table.gz")] + ([str(d / REORDERING_TABLE)] if o.reordering else [])
                 + [self.lm_path], [str(self.model_dir / "moses.ini")],
                 {"distortion_limit": o.distortion_limit, "model_dir": str(self.model_dir)}, self._model),
        ]
        return out

    def _corpus(self) -> dict:
        o = self.o
        src, tgt = _read_pair(self.src_in, self.tgt_in)
        if not o.corpus_step_active:
            if not any(split_words(a) and split_words(b) for a, b in zip(src, tgt)):
                raise TrainError(f"{self.src_in}: no sentence pair with words on both sides ({len(src)} lines)")
            return {"pairs": len(src), "note": "used as given (no tokenization, casing or cleaning)"}
        from ..progress import bar
        if o.tokenize:
            from ..data import Tokenizer
            with bar("corpus: tokenize", total=2 * len(src), unit="line", on=o.progress) as pb:
                src = _map(Tokenizer(o.f_lang or o.f, lower=False), src, pb)
                tgt = _map(Tokenizer(o.e_lang or o.e, lower=False), tgt, pb)
        else:
            src = [join_words(s) for s in src]
            tgt = [join_words(s) for s in tgt]
        if o.casing == "lower":
            src = [s.lower() for s in src]
            tgt = [s.lower() for s in tgt]
        elif o.casing == "truecase":
            from ..data import truecase_train
            src = truecase_train(src, str(self.out / f"truecase-model.{o.f}"), o.progress)
            tgt = truecase_train(tgt, str(self.out / f"truecase-model.{o.e}"), o.progress)
        keep, why = clean_pairs(src, tgt, o.min_length, o.max_length, o.ratio)
        if not keep:
            raise TrainError(f"{self.src_in}: no sentence pair survives cleaning ({_why(why)}); "
                             "check --min-length/--max-length/--ratio")
        with atomic_open(self.src) as fs, atomic_open(self.tgt) as ft:
            for i in keep:
                fs.write(src[i] + "\n")
                ft.write(tgt[i] + "\n")
        return {"pairs_in": len(src), "pairs": len(keep), "dropped": why}

    def _align(self) -> dict:
        from .align import run_eflomal, symmetrize_files
        o, d = self.o, self.out
        fwd, rev = str(d / "aligned.fwd"), str(d / "aligned.rev")
        run_eflomal(self.src, self.tgt, fwd, rev, progress=o.progress, model=o.eflomal_model,
                    n_iterations=o.eflomal_iterations, n_samplers=o.eflomal_samplers,
                    null_prior=o.eflomal_null_prior)
        n = symmetrize_files(self.src, self.tgt, fwd, rev, self.align, o.alignment, progress=o.progress)
        return {"pairs": n}

    def _extract(self) -> dict:
        from .extract import extract_files
        d = self.out
        n = extract_files(self.src, self.tgt, self.align, str(d / "extract.gz"), str(d / "extract.inv.gz"),
                          max_len=self.o.max_phrase_length, progress=self.o.progress,
                          orientation_out=str(d / "extract.o.gz") if self.o.reordering else None,
                          lex_out=(str(d / "lex.f2e"), str(d / "lex.e2f")))
        return {"phrase_pairs": n}

    def _score(self) -> dict:
        from ..benchutil import parse_size
        from ..progress import heartbeat
        from .score import score_native
        d = self.out
        with heartbeat(f"score ({self.o.threads} threads)", self.o.progress):
            st = score_native(str(d / "extract.gz"), str(d / "lex.f2e"), str(d / "lex.e2f"),
                              str(d / "phrase-table.gz"), threads=self.o.threads,
                              memory=parse_size(self.o.score_memory, "--score-memory", lo=1 << 20),
                              smoothing=self.o.smoothing)
        return {"phrase_pairs": st.out_lines}

    def _reorder(self) -> dict:
        if not self.o.reordering:
            return {"note": "no lexicalized reordering (--no-reordering)"}
        from .reordering import score_reordering
        n = score_reordering([str(self.out / "extract.o.gz")], str(self.out / REORDERING_TABLE),
                             self.o.reordering_smoothing, progress=self.o.progress, threads=self.o.threads)
        return {"phrase_pairs": n}

    def _lm(self) -> dict:
        o = self.o
        if o.lm is not None:
            return {"order": arpa_order(o.lm), "note": f"given: {o.lm}"}
        from ..lm.estimate import EstimateError, estimate
        try:
            st = estimate(self.tgt, o.lm_order, self.lm_path, memory=o.lm_memory, progress=o.progress,
                          discount_fallback=[] if o.lm_discount_fallback else None)
        except EstimateError as exc:
            if "bad discounts" not in str(exc):
                raise
            n, words = _count_lines(self.tgt), _count_words(self.tgt)
            raise TrainError(
                f"{self.tgt}: the target side ({n} sentences, {words} words) is too small for an order-{o.lm_order} "
                f"LM ({exc}); use a smaller --lm-order, --lm-discount-fallback, or --lm ARPA (an LM estimated on "
                "more text)") from None
        return {"order": st.order, "ngrams": st.counts}

    def _model(self) -> dict:
        from .model import make_model
        order = arpa_order(self.lm_path)
        ini = make_model(self.model_dir, str(self.out / "phrase-table.gz"),
                         str(self.out / REORDERING_TABLE) if self.o.reordering else None, self.lm_path, order,
                         self.o.distortion_limit)
        return {"moses_ini": str(ini), "lm_order": order}

    # --- resuming ----------------------------------------------------------------------------------------------

    def _stamp(self, step: Step) -> Path:
        return self.stamps / f"{step.name}.json"

    def is_done(self, step: Step) -> bool:
        try:
            st = json.loads(self._stamp(step).read_text())
        except (OSError, ValueError):
            return False
        return (st.get("params") == _jsonable(step.params)
                and st.get("inputs") == {p: _fp(p) for p in step.inputs}
                and st.get("outputs") == {p: _fp(p) for p in step.outputs}
                and all(v is not None for v in st["outputs"].values()))

    def run_step(self, step: Step, force: bool = False) -> tuple[str, float, dict]:
        if not force and self.is_done(step):
            st = json.loads(self._stamp(step).read_text())
            return "done before", 0.0, st.get("result", {})
        missing = [p for p in step.inputs if not os.path.isfile(p)]
        if missing:
            before = [s.name for s in self.steps() if any(p in s.outputs for p in missing)]
            hint = f" (run the {before[0]!r} step first)" if before else ""
            raise TrainError(f"step {step.name}: missing input {missing[0]}{hint}")
        self.out.mkdir(parents=True, exist_ok=True)
        try:
            self._stamp(step).unlink()
        except FileNotFoundError:
            pass
        t0 = time.perf_counter()
        result = step.run()
        secs = time.perf_counter() - t0
        atomic_write_text(self._stamp(step), json.dumps({
            "step": step.name, "params": _jsonable(step.params), "inputs": {p: _fp(p) for p in step.inputs},
            "outputs": {p: _fp(p) for p in step.outputs}, "seconds": round(secs, 3), "result": _jsonable(result),
        }, indent=1) + "\n")
        return "ran", secs, result

    def check(self, only: list[str] | None = None) -> None:
        """Before anything is written: every planned step's inputs exist or come from an earlier planned step,
        and a given --lm is an ARPA model the decoder's own reader loads."""
        if only is not None and not only:
            raise TrainError("--step: no step named (give one or more of " + ", ".join(STEPS) + ")")
        planned = [s for s in self.steps() if not only or s.name in only]
        made: set[str] = set()
        for step in planned:
            for p in step.inputs:
                if p in made or os.path.isfile(p):
                    continue
                if p in (self.src_in, self.tgt_in):
                    raise TrainError(f"{p}: no such file (--corpus PREFIX with --f/--e EXT names PREFIX.EXT)")
                if p == self.o.lm:
                    raise TrainError(f"--lm {p}: no such file")
                before = [s.name for s in self.steps() if p in s.outputs]
                hint = f" (run the {before[0]!r} step first)" if before else ""
                raise TrainError(f"step {step.name}: missing input {p}{hint}")
            made.update(step.outputs)
        if any(s.name == "model" for s in planned):
            d = self.model_dir
            while not d.exists() and d != d.parent:  # the nearest existing folder of --model-dir
                d = d.parent
            if not d.is_dir() or (self.model_dir / "moses.ini").is_dir():
                raise TrainError(f"--model-dir {self.model_dir}: "
                                 + (f"{d} is not a directory" if not d.is_dir() else "its moses.ini is a directory"))
        lm_step = next((s for s in planned if s.name == "lm"), None)
        if self.o.lm is not None and lm_step is not None and not self.is_done(lm_step):
            check_arpa(self.o.lm)

    def train(self, only: list[str] | None = None, force: bool = False) -> list[dict]:
        """Check (``check``), lock the steps to run in OUTDIR (``folderlock``: one run of a step at a time), then
        run them. moses.ini is the model's
        publication: it is removed before the first step that rewrites a table or the LM (an interrupted run never
        leaves an ini over a mix of old and new tables) and written again by the model step."""
        import contextlib

        from ..folderlock import folder_lock
        if self.o.lm is not None:  # its header, before any step runs (not after alignment and scoring)
            if not os.path.isfile(self.o.lm):
                raise TrainError(f"--lm {self.o.lm}: no such file")
            arpa_order(self.o.lm)
        self.check(only)
        with contextlib.ExitStack() as locks:  # one lock per step run: the workflow runs steps as parallel jobs
            for step in self.steps():
                if not only or step.name in only:
                    locks.enter_context(folder_lock(self.out, "tm train", part=step.name, option="--outdir"))
            return self._train(only, force)

    def _train(self, only: list[str] | None, force: bool) -> list[dict]:
        rows = []
        ini = self.model_dir / "moses.ini"
        for step in self.steps():
            if only and step.name not in only:
                continue
            if self.o.progress:
                print(f"tm train: step {step.name}", file=sys.stderr, flush=True)
            if step.name != "model" and ini.exists() and (force or not self.is_done(step)):
                ini.unlink()
                if self.o.progress:
                    print(f"tm train: {ini} removed until the model step writes it again", file=sys.stderr)
            status, secs, result = self.run_step(step, force)
            rows.append({"step": step.name, "status": status, "seconds": round(secs, 1), **result})
        if not only:
            atomic_write_text(self.out / "train.json", json.dumps(
                {"options": _jsonable(asdict(self.o)), "steps": rows}, indent=1) + "\n")
        return rows


def clean_pairs(src: list[str], tgt: list[str], min_length: int, max_length: int, ratio: float
                ) -> tuple[list[int], dict[str, int]]:
    """clean-corpus-n.perl's filter on tokenized lines: keep pair i unless a side is empty or has fewer than
    ``min_length`` or more than ``max_length`` words (0: no limit), or one side is over ``ratio`` times longer
    than the other (0: no limit). Returns the kept indices and the drop counts by reason."""
    keep: list[int] = []
    why = {"empty": 0, "short": 0, "long": 0, "ratio": 0}
    for i, (s, t) in enumerate(zip(src, tgt)):
        a, b = len(split_words(s)), len(split_words(t))
        if a == 0 or b == 0:
            why["empty"] += 1
        elif a < min_length or b < min_length:
            why["short"] += 1
        elif max_length and (a > max_length or b > max_length):
            why["long"] += 1
        elif ratio and (a / b > ratio or b / a > ratio):
            why["ratio"] += 1
        else:
            keep.append(i)
    return keep, why


def check_arpa(path: str) -> None:
    """A given --lm read whole by the decoders' own ARPA reader before training starts (a broken body is refused
    now, naming file and line, not by the first decode after training); its order and <s>, </s> checked too."""
    from ..lm.arpa import read_arpa
    from ..lm.backends import specials
    from ..lm.probing import MAX_ORDER
    if not os.path.isfile(path):
        raise TrainError(f"--lm {path}: no such file")
    model = read_arpa(path)
    if not 1 <= model.order <= MAX_ORDER:
        raise TrainError(f"--lm {path}: order {model.order} is outside 1..{MAX_ORDER}")
    try:
        specials(model)
    except ValueError as exc:
        raise TrainError(f"--lm {path}: {exc}") from None


def arpa_order(path: str) -> int:
    """The order of an ARPA model, from its \\data\\ header."""
    order = 0
    with open_text(path, strict=False) as fh:  # ARPA: KenLM's blanks (space, \t, \r), not the line rule
        seen = False
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if line == "\\data\\":
                seen = True
            elif seen and line.startswith("ngram"):
                m = re.fullmatch(r"ngram\s+0*([1-9][0-9]*)\s*=\s*([0-9]+)", line)
                if m is None:
                    raise TrainError(f"{path}:{lineno}: bad ARPA header line {line!r} (expected 'ngram N=COUNT')")
                order = max(order, int(m.group(1)))
            elif seen and line.startswith("\\"):
                break
            if lineno > 1000 and not seen:
                break
    if not order:
        raise TrainError(f"{path}: not an ARPA file (no \\data\\ section with ngram counts)")
    return order


def _read_pair(src: str, tgt: str) -> tuple[list[str], list[str]]:
    for p in (src, tgt):
        if not os.path.isfile(p):
            raise TrainError(f"{p}: no such file (--corpus PREFIX with --f/--e EXT names PREFIX.EXT)")
    with open_text(src) as fs:
        a = [line.rstrip("\n") for line in fs]
    with open_text(tgt) as ft:
        b = [line.rstrip("\n") for line in ft]
    if len(a) != len(b):
        raise TrainError(line_count_mismatch(src, len(a), tgt, len(b)))
    if not a:
        raise TrainError(f"{src}: empty corpus")
    for path, lines in ((src, a), (tgt, b)):
        for lineno, line in enumerate(lines, 1):
            if "|||" in line:
                raise TrainError(f"{path}:{lineno}: '|||' in the corpus (the field separator of Moses' extract and "
                                 "phrase-table files); escape or remove it")
    return a, b


def _map(fn, lines: list[str], pb) -> list[str]:
    out = []
    for s in lines:
        out.append(join_words(fn(s)))
        pb.update()
    return out


def _count_lines(path: str) -> int:
    with open_text(path) as fh:
        return sum(1 for _ in fh)


def _count_words(path: str) -> int:
    with open_text(path) as fh:
        return sum(len(split_words(line)) for line in fh)


def _why(why: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in why.items() if v) or "nothing dropped"


def _jsonable(x):
    return json.loads(json.dumps(x, default=str))


def summary(rows: list[dict], trainer: Trainer) -> str:
    """The end-of-run summary: one line per step, then the model and how to use it."""
    lines = ["step      status       seconds  result"]
    for r in rows:
        extra = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("step", "status", "seconds"))
        lines.append(f"{r['step']:<9} {r['status']:<12} {r['seconds']:>7.1f}  {extra}")
    ini = trainer.model_dir / "moses.ini"
    if ini.exists():
        lines.append(f"model: {ini}")
        lines.append(f"decode: smtbench decode normal -f {ini} < input.{trainer.o.f} > output.{trainer.o.e}")
    return "\n".join(lines)
