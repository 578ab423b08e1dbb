"""A near-exact reference for search errors: the normal stack search with no beam, widened until two widths
agree. Not a proof of optimality (that would need A* with an admissible heuristic), but on short sentences the
widest search explores far more than any pruned decoder does; every row says how many references were confirmed
by the widening and how many decoder outputs beat the reference (which would expose a reference that is not
exact)."""
from __future__ import annotations

from dataclasses import dataclass

from .model import PhraseModel
from .normal import NormalDecoder


@dataclass
class Reference:
    score: float          # best model score found by the widest search
    confirmed: bool       # the two widest searches agree
    seconds: float        # decoding time of all widths


def near_exact(model: PhraseModel, lines: list[str], widths: tuple[int, ...] = (1000, 5000),
               distortion_limit: int | None = None) -> list[Reference]:
    """Normal search with beam threshold 0 at each stack size in ``widths`` (increasing)."""
    if len(widths) < 2 or list(widths) != sorted(set(widths)):
        raise ValueError(f"reference widths {widths}: give two or more increasing stack sizes")
    decs = [NormalDecoder(model, stack_size=w, beam_threshold=0, distortion_limit=distortion_limit) for w in widths]
    out = []
    for i, line in enumerate(lines):
        trs = [d.translate(line, f"<reference>:{i + 1}") for d in decs]
        scores = [t.best.total if t.best else 0.0 for t in trs]
        out.append(Reference(max(scores), abs(scores[-1] - scores[-2]) <= 1e-9, sum(t.seconds for t in trs)))
    return out


def search_errors(scores: list[float], refs: list[Reference], tol: float = 1e-6) -> dict[str, int]:
    """Outputs scoring below the reference (search errors) and above it (the reference was not exact)."""
    if len(scores) != len(refs):
        raise ValueError("search_errors: one score per reference sentence")
    return {"search_errors": sum(s < r.score - tol for s, r in zip(scores, refs)),
            "beat_reference": sum(s > r.score + tol for s, r in zip(scores, refs)),
            "short_sentences": len(refs),
            "references_confirmed": sum(r.confirmed for r in refs)}
