"""A near-exact reference for search errors: the normal stack search with no beam and exact recombination,
widened until two widths agree. Exact recombination (``recombine_forward``): Moses' default merges hypotheses
whose previous pair's forward reordering scores differ, which can lose the best path at any width (a pruned cube
search that kept the other hypothesis then beats even an unpruned reference). Agreement of two widths is not a
proof of optimality; a widest search that pruned nothing is (``exact``: every hypothesis of the search space
expanded, only equal states merged). Every row says how many references were confirmed by the widening, how many
are exact, and how many decoder outputs beat the reference (which would expose a reference that is not exact:
never an exact one)."""
from __future__ import annotations

from dataclasses import dataclass

from .model import PhraseModel
from .normal import NormalDecoder


@dataclass
class Reference:
    score: float          # best model score found by the widest search
    confirmed: bool       # the two widest searches agree
    seconds: float        # decoding time of all widths
    exact: bool = False   # the widest search pruned and discarded nothing: score is the optimum


def near_exact(model: PhraseModel, lines: list[str], widths: tuple[int, ...] = (1000, 5000),
               distortion_limit: int | None = None) -> list[Reference]:
    """Normal search with beam threshold 0 and exact recombination at each stack size in ``widths`` (increasing)."""
    if len(widths) < 2 or list(widths) != sorted(set(widths)):
        raise ValueError(f"reference widths {widths}: give two or more increasing stack sizes")
    decs = [NormalDecoder(model, stack_size=w, beam_threshold=0, distortion_limit=distortion_limit,
                          recombine_forward=True) for w in widths]
    out = []
    for i, line in enumerate(lines):
        trs = [d.translate(line, f"<reference>:{i + 1}") for d in decs]
        scores = [t.best.total if t.best else 0.0 for t in trs]
        widest = trs[-1].counters
        out.append(Reference(max(scores), abs(scores[-1] - scores[-2]) <= 1e-9, sum(t.seconds for t in trs),
                             widest["pruned"] == 0 and widest["beam_discarded"] == 0))
    return out


def search_errors(scores: list[float], refs: list[Reference], tol: float = 1e-6) -> dict[str, int]:
    """Outputs scoring below the reference (search errors) and above it (the reference was not exact)."""
    if len(scores) != len(refs):
        raise ValueError("search_errors: one score per reference sentence")
    return {"search_errors": sum(s < r.score - tol for s, r in zip(scores, refs)),
            "beat_reference": sum(s > r.score + tol for s, r in zip(scores, refs)),
            "beat_exact_reference": sum(s > r.score + tol for s, r in zip(scores, refs) if r.exact),
            "short_sentences": len(refs),
            "references_confirmed": sum(r.confirmed for r in refs),
            "references_exact": sum(r.exact for r in refs)}
