"""The loop of Moses' ``mert-moses.pl`` with our decoders and optimisers.

Iteration i: decode the dev source with the current weights into an n-best list (``smtbench decode <decoder>
--n-best``, Moses format), add it to every earlier iteration's list (distinct hypotheses per sentence), optimise
(MERT or k-best batch MIRA) from the current weights, and stop when no weight moves by 1e-5 or more
(mert-moses.pl's test) or after ``max_iterations`` (its default 25). The weights the optimiser sees are the
tuneable features of the ini in order (UnknownWordPenalty and ``tuneable=false`` features keep their weights, as
Moses leaves them out of its n-best lists); the optimiser's weights are L1-normalised.

Everything lives in a work directory, one file per step written atomically (``run<i>.nbest.gz``, ``run<i>.1best``,
``run<i>.json`` with the weights decoded, the dev BLEU of that 1-best and the optimiser's result), so an interrupted
run resumes where it stopped; ``tune.json`` records the arguments and a resumed run must match them (else it is
refused: another run's directory), and the content of its inputs (size, mtime and SHA-256 of the ini, the files its
features read, the dev source and references): where the same arguments meet changed content, the run restarts from
run 1 and says so in one line. One run per work directory at a time (``folderlock``).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any, Sequence

import numpy as np

from ..decode.ini import MosesConfig, load_ini
from ..ioutil import open_text, read_lines, words
from ..procs import Popen
from .bleu import load_references
from .pool import NbestPool

UNTUNEABLE_KINDS = ("UnknownWordPenalty",)
MIN_CHANGE = 1e-5    # mert-moses.pl's $minimum_required_change_in_weights
DECODERS = ("normal", "cube", "beam")
OPTIMIZERS = ("mert", "mira")


#: options that do not change what any iteration computes: a resumed run may change them
_NOT_RECORDED = ("progress", "return_best_dev", "sentences", "max_iterations")


class TuneError(ValueError):
    """A tuning run that cannot go on (bad arguments, a work directory of another run, a failed decoder)."""


def tuneable_layout(cfg: MosesConfig) -> list[tuple[str, int]]:
    """[(feature name, number of weights)] of the features the optimiser tunes, in ini order."""
    return [(f.name, f.num_features) for f in cfg.features
            if f.kind not in UNTUNEABLE_KINDS and f.args.get("tuneable", "true").lower() != "false"]


def weights_of(cfg: MosesConfig, layout: Sequence[tuple[str, int]]) -> np.ndarray:
    by_name = {f.name: f for f in cfg.features}
    return np.array([w for name, _ in layout for w in by_name[name].weights], dtype=np.float64)


def split_weights(layout: Sequence[tuple[str, int]], w: Sequence[float]) -> dict[str, list[float]]:
    out, k = {}, 0
    for name, n in layout:
        out[name] = [float(v) for v in w[k:k + n]]
        k += n
    return out


def weight_string(weights: dict[str, list[float]]) -> str:
    """Moses' ``-weight-overwrite`` text: ``Name= v v Name= v``."""
    return " ".join(f"{name}= " + " ".join(repr(v) for v in ws) for name, ws in weights.items())


UNTUNED_COMMENTS = {  # tm model's own words for default weights (tm/model.py), which a tuned ini must not keep
    "# written by smtbench (the layout of Moses' train-model.perl, default untuned weights)":
        "# written by smtbench (the layout of Moses' train-model.perl)",
    "# The default weights are NOT optimized for translation quality.": None,  # -> the ``note``
}


def write_ini(src: str | os.PathLike[str], weights: dict[str, list[float]], out: str | os.PathLike[str],
              note: str | None = None, paths: dict[str, str] | None = None) -> None:
    """``src`` with only the values of the [weight] lines of ``weights`` replaced (layout, comments, order kept).
    ``note``: where the weights come from; it replaces `tm model`'s comments that call them untuned defaults.
    ``paths``: a feature kind (the [feature] line's first word, e.g. PhraseDictionaryMemory) -> the table its
    ``path=`` names instead (made absolute); every kind given must have a line."""
    from ..ioutil import atomic_open

    with open_text(src) as fh:
        lines = fh.readlines()
    section = None
    done: set[str] = set()
    repathed: set[str] = set()
    with atomic_open(out) as fh:
        for line in lines:
            s = line.strip()
            if note is not None and s in UNTUNED_COMMENTS:
                eol = "\n" if line.endswith("\n") else ""
                line = (UNTUNED_COMMENTS[s] or f"# {note}") + eol
            elif s.startswith("[") and s.endswith("]"):
                section = s[1:-1].strip()
            elif section == "feature" and "path=" in s and not s.startswith("#"):
                kind = words(s)[0]
                if paths and kind in paths:
                    eol = line[len(line.rstrip("\r\n")):]
                    line = " ".join("path=" + os.path.abspath(paths[kind]) if t.startswith("path=") else t
                                    for t in line.rstrip("\r\n").split(" ")) + eol
                    repathed.add(kind)
                else:
                    line = _repath(line, Path(src).parent, Path(out).parent)
            elif section == "weight" and "=" in s and not s.startswith("#"):
                name = s.split("=", 1)[0].strip()
                if name in weights:
                    eol = "\n" if line.endswith("\n") else ""
                    line = f"{name}= " + " ".join(repr(v) for v in weights[name]) + eol
                    done.add(name)
            fh.write(line)
        missing = set(weights) - done
        if missing:
            raise TuneError(f"{src}: no [weight] line for {', '.join(sorted(missing))}")
        missing = set(paths or ()) - repathed
        if missing:
            raise TuneError(f"{src}: no [feature] line with a path= for {', '.join(sorted(missing))}")


def decoder_passthrough(args: Sequence[str] | None) -> list[str]:
    """The options after ``--`` that `tune` / `tune-eval` pass to `smtbench decode` (not the ones they set)."""
    extra = list(args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    for opt in extra:
        if opt.split("=")[0] in ("-f", "--config", "-i", "--input", "-o", "--output", "--n-best", "--weight-overwrite"):
            raise TuneError(f"decoder option {opt}: set by `smtbench tune` itself")
    return extra


def _repath(line: str, ini_dir: Path, out_dir: Path) -> str:
    """A [feature] line whose relative ``path=`` the decoders find only beside the input ini (not from the working
    directory) gets the path relative to the output's folder, so the tuned ini loads from where it is written."""
    def fix(tok: str) -> str:
        if not tok.startswith("path="):
            return tok
        value = tok[len("path="):]
        if os.path.isabs(value) or ini_dir.resolve() == out_dir.resolve():
            return tok
        exts = ("", ".gz", ".xz")
        if any(os.path.exists(value + e) for e in exts) or not any((ini_dir / (value + e)).exists() for e in exts):
            return tok
        return "path=" + os.path.relpath(ini_dir / value, out_dir)

    eol = line[len(line.rstrip("\r\n")):]
    return " ".join(fix(t) for t in line.rstrip("\r\n").split(" ")) + eol


@dataclass
class TuneOptions:
    decoder: str = "cube"
    decoder_args: list[str] = field(default_factory=list)
    optimizer: str = "mert"
    nbest: int = 100
    nbest_factor: int = 20  # decode nbest * factor entries, keep the first nbest distinct strings (Moses' "distinct")
    seed: int = 1
    max_iterations: int = 25
    restarts: int = 20
    mira_c: float = 0.01
    mira_epochs: int = 60
    return_best_dev: bool = False
    progress: bool = True
    sentences: int = 0   # tune on the first N dev sentences only (0 = all)

    def check(self) -> None:
        if self.decoder not in DECODERS:
            raise TuneError(f"--decoder {self.decoder!r}: one of {', '.join(DECODERS)}")
        if self.optimizer not in OPTIMIZERS:
            raise TuneError(f"--optimizer {self.optimizer!r}: one of {', '.join(OPTIMIZERS)}")
        if not 1 <= self.nbest <= 100_000:
            raise TuneError(f"--nbest {self.nbest}: must be in 1..100000")
        if not 1 <= self.nbest_factor <= 1000 or self.nbest * self.nbest_factor > 100_000:
            raise TuneError(f"--nbest-factor {self.nbest_factor}: need 1..1000 and nbest x factor <= 100000")
        if not 1 <= self.max_iterations <= 1000:
            raise TuneError(f"--max-iterations {self.max_iterations}: must be in 1..1000")
        if self.sentences < 0:
            raise TuneError(f"--sentences {self.sentences}: must be >= 0")
        if not 0 <= self.restarts <= 10_000:
            raise TuneError(f"--random-restarts {self.restarts}: must be in 0..10000")
        if not (math.isfinite(self.mira_c) and self.mira_c > 0):  # checked before the first decode, not after it
            raise TuneError(f"--mira-c {self.mira_c}: must be a finite number > 0")
        if self.mira_epochs < 1:
            raise TuneError(f"--mira-epochs {self.mira_epochs}: must be >= 1")


@dataclass
class Iteration:
    run: int
    weights: dict[str, list[float]]       # the weights this iteration decoded with (tuneable features)
    dev_bleu: float                       # sacrebleu --tokenize none of their 1-best on the dev references
    nbest_lines: int
    pool_size: int
    optimizer: str
    new_weights: dict[str, list[float]]   # the optimiser's answer (L1-normalised)
    nbest_bleu_before: float              # n-best BLEU of `weights` on the merged lists
    nbest_bleu_after: float               # ... of `new_weights`
    decode_seconds: float
    optimize_seconds: float
    converged: bool


def sacrebleu_tok(hyp_path: Path, refs: list[list[str]]) -> float:
    """sacrebleu with ``--tokenize none`` (the text is tokenized and lowercased already)."""
    import sacrebleu

    hyps = read_lines(hyp_path)
    return float(sacrebleu.corpus_bleu(hyps, refs, tokenize="none", force=True).score)


def decode(ini: str, src: str, weights: dict[str, list[float]] | None, opts: TuneOptions, onebest: Path,
           nbest: Path | None, log: Path, err: IO[str]) -> float:
    """Run ``smtbench decode <decoder>`` (weights overwritten when given, an n-best list when ``nbest``); its stderr
    goes to ``log`` and, with progress on, to ``err``. Returns the wall seconds."""
    from ..ioutil import atomic_open

    cmd = [sys.executable, "-m", "smtbench.cli", "decode", opts.decoder, "-f", ini, "--input", src,
           "-o", str(onebest)]
    if weights:
        cmd += ["--weight-overwrite", weight_string(weights)]
    if nbest is not None:
        cmd += ["--n-best", str(nbest), str(opts.nbest * opts.nbest_factor)]
    if not opts.progress:
        cmd.append("--no-progress")
    cmd += opts.decoder_args
    t0 = time.perf_counter()
    with atomic_open(log) as lg:
        lg.write(" ".join(cmd) + "\n")
        with Popen(cmd, stderr=subprocess.PIPE) as proc:  # stopped if this block raises or we are stopped
            assert proc.stderr is not None
            while True:
                chunk = proc.stderr.read1(4096) if hasattr(proc.stderr, "read1") else proc.stderr.read(4096)
                if not chunk:
                    break
                text = chunk.decode("utf-8", "replace")
                lg.write(text)
                if opts.progress:
                    err.write(text)
                    err.flush()
            rc = proc.wait()
    if rc != 0:
        raise TuneError(f"the decoder failed (exit {rc}); its messages are in {log}")
    return time.perf_counter() - t0


def distinct_nbest(src: Path, dst: Path, n: int) -> int:
    """Keep each sentence's first ``n`` entries with distinct strings (Moses' ``-n-best-list FILE N distinct``, which
    mert-moses.pl asks for); returns the lines kept."""
    from ..ioutil import atomic_open, open_text

    kept = 0
    seen: set[str] = set()
    sid = None
    with open_text(src) as fin, atomic_open(dst) as fout:
        for line in fin:
            head, _, rest = line.partition(" ||| ")
            if head != sid:
                sid, seen = head, set()
            text = rest.partition(" ||| ")[0].strip()
            if text in seen or len(seen) >= n:
                continue
            seen.add(text)
            fout.write(line)
            kept += 1
    return kept


def _optimise(pool: NbestPool, start: np.ndarray, opts: TuneOptions, run: int):
    from . import mert, mira

    rng = np.random.default_rng([opts.seed, run])  # one stream per iteration: a resumed run draws the same
    if opts.optimizer == "mert":
        res = mert.mert(pool, [start], rng, restarts=opts.restarts)
        return res.weights, res.start_bleu, res.bleu
    res = mira.kbmira(pool, start, rng, c=opts.mira_c, epochs=opts.mira_epochs)
    return res.weights, res.start_bleu, res.bleu


def content_fingerprint(path: str | os.PathLike[str], old: dict | None = None) -> dict:
    """A file's size, mtime and SHA-256; the hash is taken from ``old`` (an earlier fingerprint) when size and
    mtime are unchanged, so a resumed run re-reads only the files whose mtime moved."""
    import hashlib
    st = os.stat(path)
    if old and old.get("size") == st.st_size and old.get("mtime_ns") == st.st_mtime_ns and old.get("sha256"):
        return {k: old[k] for k in ("size", "mtime_ns", "sha256")}
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}


def _inputs(ini: str, cfg: MosesConfig, src: str, references: Sequence[str]) -> dict[str, str]:
    """What an iteration's results depend on, by role: the ini, the files its features read, the dev set."""
    out = {"-f": str(Path(ini).resolve())}
    for f in cfg.features:
        if f.path is not None and Path(f.path).is_file():
            out[f"{f.name} path"] = str(Path(f.path).resolve())
    out["--input"] = str(Path(src).resolve())
    for k, r in enumerate(references):
        out[f"--reference {k + 1}" if len(references) > 1 else "--reference"] = str(Path(r).resolve())
    return out


def _restart(work: Path) -> None:
    """Remove the iterations of a work directory whose inputs changed (tune.json is rewritten by the caller)."""
    for p in work.iterdir():
        if p.is_file() and p.name.startswith("run") and p.name[3:4].isdigit():
            p.unlink()


def tune(ini: str, src: str, references: Sequence[str], workdir: str | os.PathLike[str], opts: TuneOptions,
         err: IO[str] | None = None) -> tuple[dict[str, list[float]], list[Iteration]]:
    """The mert-moses.pl loop; returns (final tuneable weights, the iterations). One run per work directory at a
    time (``folderlock``; a second is refused naming the holder)."""
    from ..folderlock import folder_lock
    opts.check()
    with folder_lock(workdir, "tune", option="--workdir"):
        return _tune(ini, src, references, workdir, opts, err or sys.stderr)  # stderr as it is now, not at import


def _tune(ini: str, src: str, references: Sequence[str], workdir: str | os.PathLike[str], opts: TuneOptions,
          err: IO[str]) -> tuple[dict[str, list[float]], list[Iteration]]:
    from ..ioutil import atomic_write_text

    cfg = load_ini(ini)
    layout = tuneable_layout(cfg)
    if not layout:
        raise TuneError(f"{ini}: no tuneable feature")
    work = Path(workdir)
    if work.exists() and not work.is_dir():
        raise TuneError(f"--workdir {work}: exists and is not a folder")
    work.mkdir(parents=True, exist_ok=True)
    inputs = _inputs(ini, cfg, src, references)
    record = {"ini": str(Path(ini).resolve()), "input": str(Path(src).resolve()),
              "references": [str(Path(r).resolve()) for r in references], "layout": layout,
              **{k: v for k, v in asdict(opts).items() if k not in _NOT_RECORDED}}
    if opts.sentences:
        record["sentences"] = opts.sentences
    src, references = _subset(src, references, opts.sentences, work)
    refs = load_references(list(references))
    ref_columns = [read_lines(r) for r in references]
    with open_text(src) as fh:
        n_src = sum(1 for _ in fh)
    if n_src != len(refs):
        raise TuneError(f"{src}: {n_src} lines, but {references[0]} has {len(refs)}")
    record["layout"] = [list(x) for x in layout]
    state = work / "tune.json"
    old_content: dict = {}
    if state.exists():
        old = _read_json(state, dict)
        diff = [k for k in record if old.get(k) != record[k]]
        if diff:
            raise TuneError(f"{work}: a tuning run with other arguments ({', '.join(diff)}) is there; "
                            f"use another --workdir or remove it")
        old_content = old.get("content") or {}
    # resume only on the same content: the same arguments with changed files (a dev set edited under its name, a
    # retrained model) restart the run (what the workflow wants when Snakemake reruns tune after its inputs)
    content = {role: {"path": p, **content_fingerprint(p, (old_content.get(role) or {}))}
               for role, p in inputs.items()}
    changed = [role for role in content if (old_content.get(role) or {}).get("sha256") != content[role]["sha256"]
               or old_content[role].get("path") != content[role]["path"]]
    changed += [role for role in old_content if role not in content]
    if state.exists() and changed:
        why = (f"the content of {', '.join(changed)} changed since its iterations were made" if old_content else
               "its tune.json records no content of the inputs to check them against (made before 2026-11-28)")
        print(f"tune: {work}: restarting from run 1 (its iterations are removed): {why}", file=err)
        _restart(work)
    if not state.exists() or old_content != content:
        atomic_write_text(state, json.dumps({**record, "content": content}, indent=1) + "\n")

    pool = NbestPool(refs, layout)
    current = weights_of(cfg, layout)
    history: list[Iteration] = []
    for run in range(1, opts.max_iterations + 1):
        done = work / f"run{run}.json"
        nbest = work / f"run{run}.nbest.gz"
        onebest = work / f"run{run}.1best"
        decoded = split_weights(layout, current)
        if done.exists():
            it = _read_iteration(done)
            try:
                resumed = weights_of_dict(it.weights, layout)
                weights_of_dict(it.new_weights, layout)
            except (KeyError, ValueError):
                raise TuneError(f"{done}: its weights do not fit {ini}'s features; remove {work}") from None
            if resumed.shape != current.shape or not np.allclose(resumed, current, rtol=0, atol=0):
                raise TuneError(f"{done}: decoded with other weights than this run reaches; remove {work}")
            pool.add_nbest(nbest)
            print(f"tune: run {run} (resumed): dev BLEU {it.dev_bleu:.2f}", file=err)
        else:
            dec_s = 0.0
            if not (nbest.exists() and onebest.exists() and (work / f"run{run}.weights.json").exists()
                    and _read_json(work / f"run{run}.weights.json", dict) == decoded):
                atomic_write_text(work / f"run{run}.weights.json", json.dumps(decoded) + "\n")
                print(f"tune: run {run}: decoding {len(refs)} sentences ({opts.decoder}, n-best {opts.nbest})",
                      file=err)
                raw = work / f"run{run}.nbest-all.gz"
                dec_s = decode(ini, src, decoded, opts, onebest, raw, work / f"run{run}.decode.log", err)
                distinct_nbest(raw, nbest, opts.nbest)
                raw.unlink()
            lines, new = pool.add_nbest(nbest)
            pool.check_complete(str(nbest))
            dev_bleu = sacrebleu_tok(onebest, ref_columns)
            t0 = time.perf_counter()
            new_w, before, after = _optimise(pool, current, opts, run)
            opt_s = time.perf_counter() - t0
            converged = bool(np.all(np.abs(new_w - current) < MIN_CHANGE))
            it = Iteration(run, decoded, dev_bleu, lines, len(pool), opts.optimizer, split_weights(layout, new_w),
                           before, after, round(dec_s, 3), round(opt_s, 3), converged)
            atomic_write_text(done, json.dumps(asdict(it)) + "\n")
        history.append(it)
        print(f"tune: run {run}: dev BLEU {it.dev_bleu:.2f} | n-best {it.nbest_lines} lines, pool {it.pool_size} "
              f"distinct | {it.optimizer} n-best BLEU {100 * it.nbest_bleu_before:.2f} -> "
              f"{100 * it.nbest_bleu_after:.2f} ({it.decode_seconds:.0f} s decoding, {it.optimize_seconds:.0f} s "
              f"optimising)", file=err)
        print("tune:   weights " + weight_string({k: [round(v, 4) for v in vs] for k, vs in it.new_weights.items()}),
              file=err)
        current = weights_of_dict(it.new_weights, layout)
        if it.converged:
            print(f"tune: no weight changed by {MIN_CHANGE} or more: stopping after run {run}", file=err)
            break
    else:
        print(f"tune: maximum number of iterations ({opts.max_iterations}) reached", file=err)
    final = split_weights(layout, current)
    if opts.return_best_dev:
        best = max(history, key=lambda h: h.dev_bleu)
        final = best.weights
        print(f"tune: returning the weights of run {best.run} (best dev BLEU {best.dev_bleu:.2f})", file=err)
    return final, history


def _read_json(path: Path, kind: type) -> Any:
    """A JSON file of the work directory; damage is one line naming it."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise TuneError(f"{path}: not valid JSON ({exc}); remove it (or the whole --workdir) and rerun") from None
    if not isinstance(value, kind):
        raise TuneError(f"{path}: expected a JSON {kind.__name__}, found {type(value).__name__}; remove it and rerun")
    return value


def _read_iteration(path: Path) -> Iteration:
    """A finished iteration's record (run<i>.json), checked field by field."""
    rec = _read_json(path, dict)
    names = [f.name for f in fields(Iteration)]
    missing = [n for n in names if n not in rec]
    extra = [k for k in rec if k not in names]
    if missing or extra:
        raise TuneError(f"{path}: not an iteration record ({'missing ' + ', '.join(missing) if missing else ''}"
                        f"{'; ' if missing and extra else ''}{'unknown ' + ', '.join(extra) if extra else ''}); "
                        "remove it and rerun (that iteration is redone)")
    it = Iteration(**rec)
    ok = isinstance(it.weights, dict) and isinstance(it.new_weights, dict) \
        and all(isinstance(v, list) and all(isinstance(x, (int, float)) for x in v)
                for w in (it.weights, it.new_weights) for v in w.values()) \
        and isinstance(it.dev_bleu, (int, float))
    if not ok:
        raise TuneError(f"{path}: its weights or dev BLEU are not numbers; remove it and rerun")
    return it


def _subset(src: str, references: Sequence[str], sentences: int, work: Path) -> tuple[str, list[str]]:
    """With ``sentences``: the first N lines of the source and references, copied into the work directory."""
    if not sentences:
        return src, list(references)
    from ..ioutil import atomic_write_text

    out = []
    for k, path in enumerate([src, *references]):
        with open_text(path) as fh:
            lines = [line if line.endswith("\n") else line + "\n" for _, line in zip(range(sentences), fh)]
        if len(lines) < sentences:
            raise TuneError(f"{path}: {len(lines)} lines, fewer than --sentences {sentences}")
        dst = work / ("dev.src" if k == 0 else f"dev.ref{k - 1}")
        atomic_write_text(dst, "".join(lines))
        out.append(str(dst))
    return out[0], out[1:]


def weights_of_dict(weights: dict[str, list[float]], layout: Sequence[tuple[str, int]]) -> np.ndarray:
    return np.array([v for name, _ in layout for v in weights[name]], dtype=np.float64)
