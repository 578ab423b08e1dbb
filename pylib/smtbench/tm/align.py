"""Word alignment: eflomal in both directions, then grow-diag-final-and (Koehn; Moses' symal semantics,
see shared/notes/moses-training-formats.md) written here.

Alignment files are Pharaoh format, one sentence per line: ``i-j`` with i = F (source, es) position and
j = E (target, en) position, 0-based.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from ..ioutil import atomic_open, line_count_mismatch, open_text
from ..ioutil import words as split_words


class AlignmentFormatError(ValueError):
    """A malformed alignment line (path:lineno: ...)."""


Point = tuple[int, int]  # (f, e)

_NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))  # in (e, f) offsets


# train-model.perl's --alignment heuristics (symal's options)
HEURISTICS = ("grow-diag-final-and", "grow-diag-final", "grow-diag", "grow", "intersect", "union",
              "srctotgt", "tgttosrc")


def symmetrize(direct: Iterable[Point], inverse: Iterable[Point], n_f: int, n_e: int,
               heuristic: str = "grow-diag-final-and") -> list[Point]:
    """Symmetrize two directional alignments with one of train-model.perl's heuristics (symal's semantics):
    intersect, union, srctotgt (the direct run), tgttosrc (the inverse run), grow[-diag][-final[-and]]."""
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown symmetrization heuristic {heuristic!r} (one of {', '.join(HEURISTICS)})")
    if heuristic.startswith("grow"):
        final = "and" if heuristic.endswith("-final-and") else ("or" if heuristic.endswith("-final") else None)
        return grow_diag_final_and(direct, inverse, n_f, n_e, final_and=final != "or",
                                   diagonal="-diag" in heuristic, final=final is not None)
    a = {(f, e) for f, e in direct}
    b = {(f, e) for f, e in inverse}
    _check_points(a | b, n_f, n_e)
    pts = {"intersect": a & b, "union": a | b, "srctotgt": a, "tgttosrc": b}[heuristic]
    return sorted(pts, key=lambda p: (p[1], p[0]))


def _check_points(points: Iterable[Point], n_f: int, n_e: int) -> None:
    for f, e in points:
        if not (0 <= f < n_f and 0 <= e < n_e):
            raise ValueError(f"alignment point {f}-{e} outside a {n_f}x{n_e} sentence pair")


def grow_diag_final_and(direct: Iterable[Point], inverse: Iterable[Point], n_f: int, n_e: int,
                        final_and: bool = True, diagonal: bool = True, final: bool = True) -> list[Point]:
    """Symmetrize two directional alignments (sets of (f, e) points) as symal
    ``-alignment=grow -diagonal=yes -final=yes -both=yes`` does (``diagonal``/``final``/``final_and`` false:
    ``-diagonal=no`` / no final step / ``-both=no``).

    ``direct`` has at most one E word per F word (the F→E run), ``inverse`` at most one F word per E word.
    Returns the symmetrized points sorted by (e, f)."""
    a = {(f, e) for f, e in direct}
    b = {(f, e) for f, e in inverse}
    _check_points(a | b, n_f, n_e)
    union = a | b
    neighbours = _NEIGHBOURS if diagonal else _NEIGHBOURS[:4]
    # work in (e, f) order like symal's std::set<pair<int,int>> of (e, f)
    cur = {(e, f) for f, e in a & b}
    e_cov = [False] * n_e
    f_cov = [False] * n_f
    for e, f in cur:
        e_cov[e] = f_cov[f] = True
    union_ef = {(e, f) for f, e in union}

    added = True
    while added:
        added = False
        # iterate in sorted order; points inserted later in the order are visited in the same pass
        import bisect
        order = sorted(cur)
        i = 0
        while i < len(order):
            e, f = order[i]
            for de, df in neighbours:
                ne, nf = e + de, f + df
                if (ne, nf) in union_ef and (ne, nf) not in cur and (not e_cov[ne] or not f_cov[nf]):
                    cur.add((ne, nf))
                    e_cov[ne] = f_cov[nf] = True
                    added = True
                    if (ne, nf) > (e, f):
                        bisect.insort(order, (ne, nf), lo=i + 1)
            i += 1
    for side in (b - a, a - b) if final else ():  # final-and: inverse-only points first, then direct-only
        for e, f in sorted((e, f) for f, e in side):
            if (e, f) in cur:
                continue
            ok = (not e_cov[e] and not f_cov[f]) if final_and else (not e_cov[e] or not f_cov[f])
            if ok:
                cur.add((e, f))
                e_cov[e] = f_cov[f] = True
    return [(f, e) for e, f in sorted(cur)]


def parse_links(line: str, path: str, lineno: int) -> list[Point]:
    pts = []
    for tok in split_words(line):
        i, sep, j = tok.partition("-")
        if not sep or not i.isdigit() or not j.isdigit():
            raise AlignmentFormatError(f"{path}:{lineno}: bad alignment point {tok!r} (expected i-j)")
        pts.append((int(i), int(j)))
    return pts


def format_links(points: Sequence[Point]) -> str:
    return " ".join(f"{f}-{e}" for f, e in points)


def symmetrize_files(src: str, tgt: str, fwd: str, rev: str, out: str, heuristic: str = "grow-diag-final-and",
                     progress: bool = False) -> int:
    """fwd = eflomal's forward links (each E word → ≤1 F word: the 'inverse' run in Moses' terms),
    rev = reverse links (each F word → ≤1 E word: the 'direct' run). Writes the ``heuristic``'s alignment."""
    from ..progress import bar
    n = 0
    with open_text(src) as fs, open_text(tgt) as ft, open_text(fwd) as ff, open_text(rev) as fr, \
            atomic_open(out) as fo, bar(f"symmetrize ({heuristic})", unit="pair", on=progress) as pb:
        for lineno, (ls, lt, lf, lr) in enumerate(zip(fs, ft, ff, fr), 1):
            pb.update()
            nf, ne = len(split_words(ls)), len(split_words(lt))
            try:
                inv = parse_links(lf, fwd, lineno)
                direct = parse_links(lr, rev, lineno)
                pts = symmetrize(direct, inv, nf, ne, heuristic)
            except AlignmentFormatError:
                raise
            except ValueError as exc:
                raise AlignmentFormatError(f"{fwd}:{lineno}: {exc}") from None
            fo.write(format_links(pts) + "\n")
            n += 1
    return n


# eflomal.Aligner's knobs and their defaults (model 3 = IBM1+HMM+fertility; iterations None = eflomal's own
# choice from the corpus size)
EFLOMAL_DEFAULTS = {"model": 3, "n_iterations": None, "n_samplers": 3, "rel_iterations": 1.0, "null_prior": 0.2}


def run_eflomal(src: str, tgt: str, fwd_out: str, rev_out: str, progress: bool = False, **knobs) -> None:
    """Align with eflomal (both directions in one call); ``knobs`` are eflomal.Aligner's (EFLOMAL_DEFAULTS).
    eflomal seeds its samplers from /dev/urandom and offers no seed, so two runs give slightly different
    alignments (and so different extract files and phrase tables); everything downstream of one alignment is
    deterministic and checked against oracles."""
    import eflomal
    from ..progress import heartbeat
    bad = set(knobs) - set(EFLOMAL_DEFAULTS)
    if bad:
        raise ValueError(f"unknown eflomal option(s): {', '.join(sorted(bad))}")
    opts = {**EFLOMAL_DEFAULTS, **{k: v for k, v in knobs.items() if v is not None}}
    if opts["model"] not in (1, 2, 3):
        raise ValueError(f"eflomal model {opts['model']}: must be 1 (IBM1), 2 (+HMM) or 3 (+fertility)")
    if opts["n_samplers"] < 1 or (opts["n_iterations"] is not None and opts["n_iterations"] < 1) \
            or not opts["rel_iterations"] > 0 or not 0 < opts["null_prior"] < 1:
        raise ValueError(f"eflomal options out of range: {opts}")
    with open_text(src) as fs, open_text(tgt) as ft:
        src_lines = fs.readlines()
        tgt_lines = ft.readlines()
    if len(src_lines) != len(tgt_lines):
        raise AlignmentFormatError(line_count_mismatch(src, len(src_lines), tgt, len(tgt_lines)))
    if not any(split_words(s) and split_words(t) for s, t in zip(src_lines, tgt_lines)):
        raise AlignmentFormatError(f"{src}: no sentence pair with words on both sides ({len(src_lines)} lines): "
                                   "nothing to align")
    run_interruptible_align(src_lines, tgt_lines, fwd_out, rev_out, opts, progress)


def run_interruptible_align(src_lines: list[str], tgt_lines: list[str], fwd_out: str, rev_out: str, opts: dict,
                            progress: bool) -> None:
    """eflomal.Aligner.align's two steps, with every temporary ours: its input files in a folder beside the
    outputs (not /tmp), its outputs through ``atomic_path``, all registered for removal on SIGTERM/SIGINT (a
    folder a SIGKILLed run left is removed by the next); its binary started through :mod:`smtbench.procs`, so it
    is stopped when we stop (and by PR_SET_PDEATHSIG when we are killed)."""
    import shutil
    import tempfile

    import eflomal
    import eflomal.cython

    from ..ioutil import _HOST, atomic_path, remove_stale_runs, removed_on_signal
    from ..procs import adopted
    from ..progress import heartbeat

    d = os.path.dirname(os.path.abspath(fwd_out))
    os.makedirs(d, exist_ok=True)
    prefix = f".eflomal.{_HOST}."
    remove_stale_runs(d, prefix)
    work = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}.", dir=d)
    its = opts["n_iterations"]
    aligner = eflomal.Aligner(**{**opts, "n_iterations": None if its is None else (its,) * opts["model"]})
    try:
        with removed_on_signal(work), atomic_path(fwd_out) as tmp_f, atomic_path(rev_out) as tmp_r:
            srcf, trgf = os.path.join(work, "src.bin"), os.path.join(work, "tgt.bin")
            with open(srcf, "wb") as fs, open(trgf, "wb") as ft:
                aligner.prepare_files(src_lines, fs, tgt_lines, ft, None, None)
            with heartbeat(f"eflomal model {opts['model']}, both directions ({len(src_lines)} pairs)", progress), \
                    adopted(eflomal.cython):
                eflomal.cython.align(srcf, trgf, links_filename_fwd=tmp_f, links_filename_rev=tmp_r,
                                     statistics_filename=None, scores_filename_fwd=None, scores_filename_rev=None,
                                     priors_filename=None, model=aligner.model, score_model=aligner.score_model,
                                     n_iterations=aligner.n_iterations, n_samplers=aligner.n_samplers, quiet=True,
                                     rel_iterations=aligner.rel_iterations, null_prior=aligner.null_prior,
                                     use_gdb=False)
            for t in (tmp_f, tmp_r):
                if not os.path.isfile(t) or (os.path.getsize(t) == 0 and src_lines):
                    raise AlignmentFormatError(f"eflomal wrote no alignment ({t}); see its messages above")
    finally:
        shutil.rmtree(work, ignore_errors=True)
