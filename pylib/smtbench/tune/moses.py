"""Moses' own tuning programs on our n-best lists: ``extractor`` (sufficient statistics and features), ``mert`` and
``kbmira``, called as mert-moses.pl calls them (found through :mod:`smtbench.moses_peer`).

The n-best lists are first written as Moses writes them: only the tuneable features (our decoders also print
UnknownWordPenalty0, which Moses leaves out). Moses' score and feature files (text) are read back so the two sides
are compared on exactly the same statistics.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import moses_peer
from ..decode.nbest import parse_features
from .. import procs
from ..errors import PeerFailed, last_line


class MosesToolError(PeerFailed):
    """A Moses tuning program (extractor, mert, kbmira) failed or wrote nothing to read: one line, no traceback."""


def moses_nbest(src: str | os.PathLike[str], dst: str | os.PathLike[str], layout: Sequence[tuple[str, int]]) -> int:
    """Copy an n-best list keeping only the features of ``layout`` (in its order); returns the lines written."""
    from ..ioutil import atomic_open, open_text

    n = 0
    with open_text(src) as fin, atomic_open(dst) as fout:
        for line in fin:
            parts = line.rstrip("\n").split(" ||| ")
            feats = parse_features(parts[2])
            field = " ".join(f"{name}= " + " ".join(repr(v) for v in feats[name]) for name, _ in layout)
            fout.write(" ||| ".join([parts[0], parts[1], field, *parts[3:]]) + "\n")
            n += 1
    return n


def _run(cmd: list[str], cwd: str | os.PathLike[str] | None = None) -> str:
    proc = procs.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise MosesToolError(f"{Path(cmd[0]).name} failed (exit {proc.returncode}): {last_line(proc.stderr)}")
    return proc.stderr


def extract(nbest: str | os.PathLike[str], references: Sequence[str], scores: str | os.PathLike[str],
            features: str | os.PathLike[str]) -> None:
    """``extractor --sctype BLEU --scfile S --ffile F -r refs -n nbest`` (mert-moses.pl's call, default scconfig)."""
    _run([moses_peer.program("extractor"), "--sctype", "BLEU", "--scfile", scores, "--ffile", features,
          "-r", ",".join(str(r) for r in references), "-n", nbest])


def read_blocks(path: str | os.PathLike[str], begin: str) -> list[np.ndarray]:
    """Moses' text score/feature file: one (rows, columns) array per sentence, in file order (sentence ids as
    the blocks give them)."""
    blocks: dict[int, np.ndarray] = {}
    with open(path, encoding="utf-8") as fh:
        lines = iter(fh)
        for line in lines:
            if not line.startswith(begin):
                continue
            head = line.split()
            sid, rows = int(head[1]), int(head[2])
            vals = [np.array(next(lines).split(), dtype=np.float64) for _ in range(rows)]
            blocks[sid] = np.vstack(vals) if vals else np.zeros((0, int(head[3])))
    return [blocks[i] for i in sorted(blocks)]


def read_scores(path) -> list[np.ndarray]:
    return read_blocks(path, "SCORES_TXT_BEGIN")


def read_features(path) -> list[np.ndarray]:
    return read_blocks(path, "FEATURES_TXT_BEGIN")


@dataclass
class MosesResult:
    weights: np.ndarray   # L1-normalised (mert: as mert writes them; kbmira: as mert-moses.pl normalises them)
    bleu: float           # the program's own report of its n-best BLEU (0..1)
    log: str


def mert(features: Sequence[str], scores: Sequence[str], start: Sequence[float], seed: int, restarts: int = 20,
         lower: float = 0.0, upper: float = 1.0) -> MosesResult:
    """``mert -d D --sctype BLEU --ifile init.opt --scfile ... --ffile ... -n restarts -r seed``."""
    features, scores = [os.path.abspath(f) for f in features], [os.path.abspath(s) for s in scores]
    with tempfile.TemporaryDirectory(prefix="smtbench-mert-") as tmp:
        d = len(start)
        init = Path(tmp) / "init.opt"
        init.write_text(" ".join(repr(float(v)) for v in start) + "\n" + " ".join([repr(lower)] * d) + "\n"
                        + " ".join([repr(upper)] * d) + "\n")
        log = _run([moses_peer.program("mert"), "-d", str(d), "--sctype", "BLEU", "--ifile", init,
                    "--scfile", ",".join(map(str, scores)), "--ffile", ",".join(map(str, features)),
                    "-n", str(restarts), "-r", str(seed)], cwd=tmp)
    m = re.search(r"Best point:\s*([-\d.e+\s]+?)\s*=>\s*([-\d.e+]+)", log)
    if not m:
        raise MosesToolError(f"mert: no 'Best point' in its log (its last line: {last_line(log)})")
    return MosesResult(np.array(m.group(1).split(), dtype=np.float64), float(m.group(2)), log)


def kbmira(features: Sequence[str], scores: Sequence[str], start: dict[str, list[float]], seed: int,
           c: float = 0.01, epochs: int = 60, shuffle: bool = True, program: str = "kbmira") -> MosesResult:
    """``kbmira --dense-init run.dense --ffile ... --scfile ... -r seed -o out`` (mert-moses.pl's batch MIRA call);
    the weights L1-normalised as mert-moses.pl does. ``program``: ``kbmira`` (as shipped) or ``kbmira-dedupfix``
    (tools/build_moses.sh: the same source with its dedup set's equality test fixed)."""
    features, scores = [os.path.abspath(f) for f in features], [os.path.abspath(s) for s in scores]
    with tempfile.TemporaryDirectory(prefix="smtbench-kbmira-") as tmp:
        dense = Path(tmp) / "run.dense"
        dense.write_text("".join(f"{name}= {float(v)!r}\n" for name, vs in start.items() for v in vs))
        out = Path(tmp) / "weights"
        cmd = [moses_peer.program(program), "--dense-init", dense, "-r", str(seed), "-o", out, "-C", str(c),
               "-J", str(epochs)] + ([] if shuffle else ["--no-shuffle"])
        for f, s in zip(features, scores):
            cmd += ["--ffile", f, "--scfile", s]
        log = _run(cmd, cwd=tmp)
        if not out.exists():  # kbmira.cpp writes the weights only when an epoch's BLEU beats the best so far (0)
            raise MosesToolError(f"{program}: wrote no weights: no epoch's n-best BLEU rose above 0 (its last "
                                 f"line: {last_line(log)})")
        dim = sum(len(v) for v in start.values())
        w = np.zeros(dim)
        for line in out.read_text().splitlines():
            m = re.match(r"^F(\d+) (\S+)", line)
            if m and int(m.group(1)) < dim:
                w[int(m.group(1))] = float(m.group(2))
    m = re.search(r"Best BLEU = ([-\d.e+]+)", log)
    total = np.abs(w).sum()
    return MosesResult(w / total if total > 0 else w, float(m.group(1)) if m else float("nan"), log)


def nbest_bleu(features: Sequence[list[np.ndarray]], scores: Sequence[list[np.ndarray]], w: np.ndarray) -> float:
    """n-best BLEU of weights ``w`` on Moses' own feature and score files (several iterations: lists of
    per-sentence arrays, merged per sentence): each sentence's highest-scoring entry, the first of equals."""
    from .bleu import bleu

    total = np.zeros(9)
    for s in range(len(features[0])):
        f = np.vstack([fs[s] for fs in features])
        st = np.vstack([sc[s] for sc in scores])
        total += st[int(np.argmax(f @ w))]
    return bleu(total)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine between two weight vectors (nan where one is all zeros: no direction to compare)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else float("nan")


def compare(nbests: Sequence[str | os.PathLike[str]], references: Sequence[str], layout: Sequence[tuple[str, int]],
            start: Sequence[float], seed: int, workdir: str | os.PathLike[str], restarts: int = 20,
            mira_epochs: int = 60, optimizers: Sequence[str] = ("mert", "mira"), shuffle: bool = True) -> list[dict]:
    """Our optimisers and Moses' on the same n-best lists (every list in ``nbests`` merged, as the last iteration
    of a tuning run sees them): one row per optimiser and side with the weights, the n-best BLEU by Moses'
    statistics (extractor's files), the program's own BLEU, and the cosine to the other side's weights. Also
    checks that our sufficient statistics equal the extractor's (a ValueError names the first sentence that
    differs)."""
    from . import mert as our_mert
    from . import mira as our_mira
    from .bleu import load_references
    from .loop import split_weights
    from .pool import NbestPool

    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    refs = load_references(list(references))
    pool = NbestPool(refs, layout)
    ffiles, sfiles = [], []
    for i, nb in enumerate(nbests):
        plain = work / f"run{i + 1}.moses.nbest"
        moses_nbest(nb, plain, layout)
        ffiles.append(str(work / f"run{i + 1}.features.dat"))
        sfiles.append(str(work / f"run{i + 1}.scores.dat"))
        extract(plain, references, sfiles[-1], ffiles[-1])
        pool.add_nbest(plain)
    feats = [read_features(f) for f in ffiles]
    scores = [read_scores(s) for s in sfiles]
    _, our_stats, offsets = pool.arrays()
    for s in range(pool.sentences):
        theirs = {tuple(r) for sc in scores for r in sc[s].astype(np.int64)}
        ours = {tuple(r) for r in our_stats[int(offsets[s]):int(offsets[s + 1])]}
        if theirs != ours:
            raise ValueError(f"sentence {s + 1}: our BLEU statistics differ from Moses' extractor "
                             f"({sorted(ours - theirs)[:2]} vs {sorted(theirs - ours)[:2]})")
    start = np.asarray(start, dtype=np.float64)
    rows = []
    for opt in optimizers:
        rng = np.random.default_rng(seed)
        if opt == "mert":
            ours = our_mert.mert(pool, [start], rng, restarts=restarts)
            peers = [("mert", mert(ffiles, sfiles, start, seed, restarts=restarts))]
        else:
            ours = our_mira.kbmira(pool, start, rng, epochs=mira_epochs, shuffle=shuffle)
            peers = [(p, kbmira(ffiles, sfiles, split_weights(layout, start), seed, epochs=mira_epochs,
                                shuffle=shuffle, program=p))
                     for p in ("kbmira", "kbmira-dedupfix") if p == "kbmira" or moses_peer.available(p)]
        sides = [("ours", f"smtbench.tune.{opt}", ours)] + [("moses", p, r) for p, r in peers]
        for side, program, r in sides:
            cos = cosine(ours.weights, (r if side == "moses" else peers[0][1]).weights)
            rows.append({"optimizer": opt, "side": side, "program": program,
                         "nbest_bleu": 100 * nbest_bleu(feats, scores, r.weights), "own_bleu": 100 * r.bleu,
                         "start_bleu": 100 * nbest_bleu(feats, scores, start), "cosine": cos,
                         "weights": [float(v) for v in r.weights], "sentences": pool.sentences,
                         "hypotheses": len(pool), "lists": len(nbests),
                         "restarts": restarts if opt == "mert" else None,
                         "shuffle": shuffle if opt == "mira" else None})
    return rows
