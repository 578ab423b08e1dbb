"""Moore & Quirk (2007), "Faster Beam-Search Decoding for Phrasal SMT" (`smtbench bench moore_quirk` rows): Fig 2 (BLEU
against ms/word), Fig 3 (BLEU against hypotheses evaluated per word), each point and the upper convex hull per
variant on a log x axis; the ratio table read on the hulls at equal BLEU; the same-settings comparisons."""
from __future__ import annotations

import argparse

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..protocol import kept
from .common import Ratio, add_interval, check_like, declare, model_note, paper_values
from . import metrics
from ..experiments.frame import Verb, arg

PAPER = "moore_quirk2007"
VARIANTS = ["pharaoh", "de", "de+ep"]
LABELS = {"pharaoh": "Pharaoh", "de": "+ distortion estimate (DE)", "de+ep": "+ DE + early pruning (DE+EP)"}
COST = {"time": "ms_per_word", "space": "hypotheses_per_word"}
KEYS = ["variant", "ttable_threshold", "beam_threshold", "ttable_limit", "beam_limit"]



def _paper_columns(pv: pd.DataFrame, key: str) -> dict:
    """The paper_* values of one row of paper_values (indexed by key), or none when the paper has no such row."""
    return {c: pv.loc[key, c] for c in pv.columns if c.startswith("paper_")} if key in pv.index else {}


def points(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per variant and setting: ms/word (min and median of the repeats), hypotheses/word, BLEU."""
    g = rows.groupby(KEYS, sort=False)
    t = g["ms_per_word"].agg(ms_per_word="min", ms_per_word_median="median", repeats="count").reset_index()
    first = g.first().reset_index()
    cols = ["vector", "search", "hypotheses_per_word", "bleu", "sentences", "source_words", "output_sha",
            "mean_score", "n_failed"]
    return t.merge(first[KEYS + [c for c in cols if c in first.columns]], on=KEYS)


def upper_hull(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The upper convex hull of the points (log10 x, y), from the cheapest point up to the highest y (the part
    of the hull that rises: the best trade-offs), as (x, y) sorted by x."""
    lx = np.log10(np.asarray(x, dtype=float))
    y = np.asarray(y, dtype=float)
    order = np.lexsort((-y, lx))
    hull: list[int] = []
    for i in order:
        if hull and lx[hull[-1]] == lx[i]:
            continue  # same cost: the higher y came first
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (lx[b] - lx[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (lx[i] - lx[a])
            if cross >= 0:  # b lies on or below the chord a-i
                hull.pop()
            else:
                break
        hull.append(i)
    h = np.array(hull, dtype=int)
    top = int(np.argmax(y[h]))
    h = h[: top + 1]
    return 10 ** lx[h], y[h]


def cost_at(hx: np.ndarray, hy: np.ndarray, bleu: float) -> float:
    """The cost at which the hull reaches `bleu` (linear in log10 cost between hull points); NaN above its top,
    the cheapest point's cost at or below the cheapest point's BLEU."""
    if bleu > hy[-1] + 1e-12:
        return math.nan
    if bleu <= hy[0]:
        return float(hx[0])
    for k in range(1, len(hx)):
        if hy[k] >= bleu:
            f = (bleu - hy[k - 1]) / (hy[k] - hy[k - 1])
            return float(10 ** (math.log10(hx[k - 1]) + f * (math.log10(hx[k]) - math.log10(hx[k - 1]))))
    return math.nan


def hulls(pts: pd.DataFrame, what: str, quality: str = "bleu") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for v in VARIANTS:
        g = pts[pts.variant == v]
        if len(g):
            out[v] = upper_hull(g[COST[what]].to_numpy(), g[quality].to_numpy())
    return out


def _repeats(rows: pd.DataFrame) -> list[pd.DataFrame]:
    """The rows of each repeat in which every point was timed (retaken attempts left out): per-repeat hulls."""
    rows = kept(rows)
    if "repeat" not in rows:
        return []
    n = rows.groupby(KEYS, sort=False).ngroups
    return [g for _, g in rows.groupby("repeat") if g.groupby(KEYS, sort=False).ngroups == n]


# the declarations (report.common.declare): every variant against DE+EP (or DE against Pharaoh), the same
# interleaved passes of one run, one clock, one thread
TIME_VS_DE_EP = Ratio("time_ratio_vs_de+ep", num="the variant's upper hull at the level", den="DE+EP's")
SPACE_VS_DE_EP = Ratio("space_ratio_vs_de+ep", num="the variant's hypotheses per word at the level", den="DE+EP's")
declare("moore_quirk_ratios", TIME_VS_DE_EP, SPACE_VS_DE_EP)
declare("moore_quirk_score_ratios", TIME_VS_DE_EP, SPACE_VS_DE_EP)
declare("moore_quirk_same_settings", Ratio("time_ratio", num="the later variant, same settings", den="the earlier"),
        Ratio("hypotheses_ratio", num="the later variant, same settings", den="the earlier"))


def _like(rows: pd.DataFrame, a: str, b: str, ratio: Ratio, where: str) -> None:
    check_like(ratio, rows[rows.variant == a], rows[rows.variant == b], where=f"{where}, {a} / {b}")


def ratio_table(rows: pd.DataFrame, quality: str = "bleu") -> pd.DataFrame:
    """The paper's comparison: ms/word and hypotheses/word of each variant at the highest BLEU all variants reach
    (the lowest of their maxima) and at 0.02 below it, read on the upper hulls; ratios to DE+EP; the paper's.
    ``quality="mean_score"``: the same at equal mean model score per sentence (search quality without BLEU's noise;
    the levels are the highest common score and 0.02 below it), no paper values."""
    pts = points(rows)
    th, sh = hulls(pts, "time", quality), hulls(pts, "space", quality)
    present = [v for v in VARIANTS if v in th]
    for v in present:
        _like(rows, v, "de+ep", TIME_VS_DE_EP, "moore_quirk ratios")
    top = min(float(th[v][1][-1]) for v in present)
    pv = paper_values(PAPER, "ratios").set_index("key") if quality == "bleu" else pd.DataFrame()
    out = []
    for level, b in (("highest", top), ("highest-0.02", top - 0.02)):
        ms = {v: cost_at(*th[v], b) for v in present}
        hy = {v: cost_at(*sh[v], b) for v in present}
        for v in present:
            best = pts[pts.variant == v].sort_values([quality, "ms_per_word"], ascending=[False, True]).iloc[0]
            key = f"level={level} variant={v}"
            r = {"level": level, quality: round(b, 6), "variant": v, "ms_per_word": ms[v],
                 "hypotheses_per_word": hy[v],
                 "time_ratio_vs_de+ep": ms[v] / ms["de+ep"] if "de+ep" in ms else math.nan,
                 "space_ratio_vs_de+ep": hy[v] / hy["de+ep"] if "de+ep" in hy else math.nan,
                 f"variant_max_{quality}": float(best[quality]), f"variant_max_{quality}_setting": best.vector,
                 "points": int((pts.variant == v).sum())}
            out.append({**r, **_paper_columns(pv, key)})
    df = pd.DataFrame(out)
    # the time ratio at each level, read on each repeat's own hulls (the hypotheses do not vary)
    per: list[list[float]] = [[] for _ in range(len(df))]
    for g in _repeats(rows):
        tr = hulls(points(g), "time", quality)
        for i, r in enumerate(df.itertuples()):
            if r.variant in tr and "de+ep" in tr:
                a, b = cost_at(*tr[r.variant], getattr(r, quality)), cost_at(*tr["de+ep"], getattr(r, quality))
                if a == a and b == b and b > 0:
                    per[i].append(a / b)
    # each ratio is time(variant) / time(DE+EP): "fast" = DE+EP, so the per-repeat values are the ratios themselves
    return add_interval(df, "time_ratio_vs_de+ep", per) if len(df) else df


def same_settings(rows: pd.DataFrame) -> pd.DataFrame:
    """End of section 6: at the same pruning settings, DE against Pharaoh and DE+EP against DE -- the range of
    BLEU differences and of time (and hypotheses) ratios over every setting both were decoded at."""
    pts = points(rows)
    setting = KEYS[1:]
    out = []
    for a, b in (("pharaoh", "de"), ("de", "de+ep")):
        m = pts[pts.variant == a].merge(pts[pts.variant == b], on=setting, suffixes=("_a", "_b"))
        if m.empty:
            continue
        _like(rows, b, a, Ratio("time_ratio", num=b, den=a), "moore_quirk same settings")
        d_bleu = m.bleu_b - m.bleu_a
        t_ratio = m.ms_per_word_a / m.ms_per_word_b
        h_ratio = m.hypotheses_per_word_a / m.hypotheses_per_word_b
        r = {"comparison": f"{b} vs {a}", "settings": len(m),
             "bleu_diff_min": d_bleu.min(), "bleu_diff_max": d_bleu.max(),
             "time_ratio_min": t_ratio.min(), "time_ratio_median": t_ratio.median(), "time_ratio_max": t_ratio.max(),
             "hypotheses_ratio_min": h_ratio.min(), "hypotheses_ratio_max": h_ratio.max()}
        pv = paper_values(PAPER, "same_settings").set_index("key")
        key = f"{b} vs {a}"
        out.append({**r, **_paper_columns(pv, key)})
    return pd.DataFrame(out)


def _figure(rows: pd.DataFrame, what: str, xlabel: str, title: str, quality: str = "bleu"):
    pts = points(rows)
    hs = hulls(pts, what, quality)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = {"pharaoh": "tab:red", "de": "tab:blue", "de+ep": "tab:green"}
    markers = {"pharaoh": "s", "de": "^", "de+ep": "o"}
    for v in VARIANTS:
        g = pts[pts.variant == v]
        if g.empty:
            continue
        ax.scatter(g[COST[what]], g[quality], s=12, alpha=0.45, color=colors[v], marker=markers[v])
        hx, hy = hs[v]
        ax.plot(hx, hy, color=colors[v], marker=markers[v], label=LABELS[v])
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("BLEU[%]" if quality == "bleu" else "mean model score per sentence")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def fig2(rows: pd.DataFrame):
    """BLEU against decoding time (ms per source word, best of the repeats, one thread)."""
    return _figure(rows, "time", "decoding time (ms per source word, 1 thread, log scale)",
                   "Moore & Quirk Fig 2 (ours): BLEU vs decoding time; lines = upper convex hulls")


def fig3(rows: pd.DataFrame):
    """BLEU against the search space (hypotheses evaluated = LM-scored, per source word)."""
    return _figure(rows, "space", "hypotheses evaluated per source word (log scale)",
                   "Moore & Quirk Fig 3 (ours): BLEU vs search space; lines = upper convex hulls")


def fig_score(rows: pd.DataFrame):
    """Not in the paper: Fig 2 with the mean model score (the search's own objective) instead of BLEU."""
    return _figure(rows, "time", "decoding time (ms per source word, 1 thread, log scale)",
                   "Fig 2 with model score (ours): search quality vs decoding time; lines = upper convex hulls",
                   quality="mean_score")


WEIGHTS_UNTUNED = ("The weights are Moses' untuned defaults (the paper's were tuned by MERT): BLEU can rise when a "
                   "tight beam keeps the output monotone, so the same reading is also given at equal mean model score "
                   "per sentence (moore_quirk_score_ratios, moore_quirk_score.png), which measures the search alone.")


NOTES = ("Ours: the paper-faithful configuration (workflow/rules/moore_quirk.smk): a phrase table our pipeline trains "
         "from the oracle's shipped alignment (max phrase length 7), no lexicalized reordering, a 3-gram LM of the "
         "shipped corpus' train books, Moses' default (untuned) weights, distortion limit 5, paper mode (the "
         "paper's limit, the final jump charged), test books (every `every`-th verse, then the first `sentences`: see the rows). Settings are the "
         "paper's vector (t-table threshold, beam threshold, t-table limit, beam limit); early-pruning threshold "
         "= t-table threshold; thresholds in natural-log score units with the weights normalised to sum |w| = 1 "
         "(UnknownWordPenalty excepted). ms_per_word: best of the repeats, decoding only (model loading "
         "excluded), one thread; hypotheses_per_word: hypotheses whose LM score was computed. Every ratio is "
         "read on the upper convex hulls (log cost, BLEU) at the same BLEU, interpolated: `highest` = the lowest "
         "of the variants' maxima, so that every variant reaches it. " + WEIGHTS_UNTUNED + " paper_*: Moore & "
         "Quirk 2007, section 6 (Hansards, Perl, 2000 test sentences).")



_SETUP = ("a phrase table our pipeline trains from the oracle's shipped alignment (max phrase length 7), no "
          "lexicalized reordering, a 3-gram LM of the shipped corpus' train books, Moses' default (untuned) weights, "
          "distortion limit 5, paper mode (the paper's limit, the final jump charged), test books")


def highest_bleu_note(rows: pd.DataFrame, within: float = 0.1) -> str:
    """The paper's premise, answered from the rows: do the variants reach the same highest BLEU (within ``within``)?
    Each variant's best BLEU over every setting it was decoded at."""
    pts = points(rows)
    best = {v: float(pts.loc[pts.variant == v, "bleu"].max()) for v in VARIANTS if (pts.variant == v).any()}
    if not best:
        return ""
    spread = max(best.values()) - min(best.values())
    return (f"Same highest BLEU (the paper's premise, within {within:g}): "
            f"{'yes' if spread <= within + 1e-9 else 'no'}: "
            + ", ".join(f"{v} {b:.2f}" for v, b in best.items()) + f" (spread {spread:.2f}).")


def tuned_weights_note(iterations: str | Path) -> str:
    """The weight sentence of a run on tuned weights, from the tuning run's summary (`smtbench tune --summary`)."""
    it = pd.read_json(iterations, lines=True)
    if it.empty:
        raise ValueError(f"{iterations}: no tuning iterations")
    best = it.loc[it["dev_bleu"].idxmax()]
    opt = {"mert": "MERT", "mira": "k-best batch MIRA"}.get(str(best.optimizer), str(best.optimizer))
    return (f"The weights were tuned on the dev books, as the paper's were (by MERT), here by our {opt} "
            f"(`smtbench tune`, {len(it)} iterations, seed {best.seed}, {best.decoder} {best.decoder_args} "
            f"{best.nbest}-best lists; returned: the weights of run {int(best.run)}, dev BLEU {best.dev_bleu:.2f}); "
            "the reading at equal mean model score per sentence is given too (the `_score_` table and figure).")


def notes(rows: pd.DataFrame, tuning: str | Path | None = None) -> str:
    """NOTES with the model and settings described from the rows given (features from the recorded weights, LM
    order when recorded, distortion limit, mode, sentences), not the workflow's configuration."""
    def vals(col):
        return sorted({str(v) for v in rows[col].dropna()}) if col in rows else []
    feats: set[str] = set()
    for w in rows.get("weights", pd.Series(dtype=object)).dropna():
        feats |= {k.rstrip("0123456789") for k in w}
    ro = "lexicalized reordering" if "LexicalReordering" in feats else "no lexicalized reordering"
    orders = vals("lm_order")
    lm = (f"a {'/'.join(orders)}-gram LM" if orders else "an LM (its order is not recorded in these rows)") \
        if "LM" in feats or orders else "no LM"
    dl, mode = "/".join(vals("distortion_limit")) or "?", "/".join(vals("mode")) or "?"
    every = "/".join(vals("every"))
    sents = "/".join(vals("sentences"))
    setup = (f"the model and settings of these rows: {ro}, {lm}, features {', '.join(sorted(feats))}, the weights "
             f"recorded in the rows, distortion limit {dl}, {mode} mode, {sents} sentences"
             + (f" (every {every}-th input line)" if every and every != "1" else ""))
    text = NOTES.replace("the paper-faithful configuration (workflow/rules/moore_quirk.smk): " + _SETUP, setup)
    text = text.replace(" (every `every`-th verse, then the first `sentences`: see the rows)", "")
    if tuning:
        text = text.replace(WEIGHTS_UNTUNED, tuned_weights_note(tuning))
    text += " " + highest_bleu_note(rows)
    return text + " " + model_note(rows, "work/moore-quirk/model/moses.ini, the paper-faithful model on our tables "
                                         "from the oracle's alignment")


# ---- the second configuration: DE+EP in Moses mode on the oracle's Moses model, beside the other searches
ORACLE_RUNS = {
    "m2-cube400": "Moses2 cube pruning, pop limit 400, -s 400",
    "m2-normal200": "Moses2 normal search -s 200",
    "m1-normal200": "Moses v1 normal search -s 200",
    "m1-normal200-edc": "Moses v1 normal search -s 200 -early-distortion-cost",
}


#: the oracle's recorded runs: where and how (README.md of the oracle; the run dates are not recorded there)
RECORDED = {"quiet": "recorded, the oracle's machine (Moses 34452895 of 2025-02-03; runs-quiet.tsv: re-timed quiet, "
                     "load < 1, 1 thread, no n-best; all dev verses)",
            "loaded": "recorded, the oracle's machine (Moses 34452895 of 2025-02-03; runs.tsv: shared, load 2.5-5, "
                      "1 thread, with a 10-best list; all dev verses)"}


def oracle_points(oracle: str, sentences: int) -> pd.DataFrame:
    """The oracle's runs: BLEU of their 1-bests (the first `sentences` dev verses, computed here), and their
    decoding time per word as the oracle recorded it (runs-quiet.tsv when re-timed quietly, else runs.tsv, which
    was timed with a 10-best list; over all dev verses)."""
    from pathlib import Path

    from ..decode.compare import bleu, read_lines
    d = Path(oracle)
    refs = read_lines(d / "dev.en")
    n = sentences or len(refs)
    quiet = pd.read_csv(d / "runs-quiet.tsv", sep="\t").set_index("config")
    runs = pd.read_csv(d / "runs.tsv", sep="\t").set_index("config")
    out = []
    for cfg, label in ORACLE_RUNS.items():
        hyp = read_lines(d / f"{cfg}.1best")
        if cfg in quiet.index:
            ms = 1000 * float(quiet.loc[cfg, "decode_s_min"]) / float(quiet.loc[cfg, "source_words"])
            timed = RECORDED["quiet"]
        else:
            ms = 1000 / float(runs.loc[cfg, "words_per_s"])
            timed = RECORDED["loaded"]
        out.append({"system": f"{label} (recorded)", "config": cfg, "verses": n, "bleu": round(bleu(hyp[:n], refs[:n]), 4),
                    "ms_per_word": ms, "timed_by": timed})
    return pd.DataFrame(out)


VS_DE_EP = Ratio("time_ratio_vs_de+ep", num="the row's search (ours, or Moses live), ms per word",
                 den="DE+EP's upper hull at that BLEU on the same verses, the same passes")
declare("moore_quirk_moses", VS_DE_EP)

#: the kinds of the live Moses rows (bench moore_quirk --live-peers); every other row is a point of ours
LIVE_KINDS = ("moses_peer", "moses_timing")


def split_live(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(our points, the live Moses runs' checked rows, their timing rows); rows from before issue 40 have no kind."""
    kind = rows["kind"] if "kind" in rows.columns else pd.Series(None, index=rows.index, dtype=object)
    return rows[~kind.isin(LIVE_KINDS)], rows[kind == "moses_peer"], rows[kind == "moses_timing"]


def _de_ep_hull(pts: pd.DataFrame, head: bool) -> tuple[np.ndarray, np.ndarray]:
    """DE+EP's upper hull (ms/word, BLEU): over every verse, or (``head``) over Moses v1's verses (head_*)."""
    d = pts[pts.variant == "de+ep"]
    return upper_hull(d["head_ms_per_word" if head else "ms_per_word"].to_numpy(),
                      d["head_bleu" if head else "bleu"].to_numpy())


def _head_points(rows: pd.DataFrame) -> pd.DataFrame:
    """points() with the head_* fields (best head time of the repeats, head BLEU), where the rows have them."""
    pts = points(rows)
    if "head_ms_per_word" not in rows.columns:
        return pts
    g = rows.groupby(KEYS, sort=False).agg(head_ms_per_word=("head_ms_per_word", "min"),
                                           head_bleu=("head_bleu", "first"),
                                           head_sentences=("head_sentences", "first")).reset_index()
    return pts.merge(g, on=KEYS)


def live_rows(pts: pd.DataFrame, ours: pd.DataFrame, peer: pd.DataFrame, timing: pd.DataFrame) -> pd.DataFrame:
    """One row per live Moses run: BLEU of its 1-best on its verses, best ms/word of its repeats, DE+EP's hull on
    the same verses read at that BLEU, the ratio (declared, checked like for like: report.common.check_like)."""
    out = []
    n_all = int(pts.sentences.iloc[0])
    for _, r in peer.iterrows():
        row = {"system": f"{r.system} (live)", "config": r.config, "verses": int(r.sentences)}
        if r.status != "ok":
            out.append({**row, "timed_by": f"this run: {r.status}"})
            continue
        head = int(r.sentences) < n_all
        if head and not ("head_sentences" in pts.columns and (pts.head_sentences == r.sentences).all()):
            out.append({**row, "bleu": float(r.bleu), "timed_by": "this run, but our rows have no times on its "
                        f"{int(r.sentences)} verses: no ratio"})
            continue
        t = kept(timing[timing.config == r.config])
        hx, hy = _de_ep_hull(pts, head)
        ms = float(t.ms_per_word.min()) if len(t) else math.nan
        like = check_like(VS_DE_EP, t, ours[ours.variant == "de+ep"], where=f"moore_quirk_moses, {r.config}")
        den = cost_at(hx, hy, float(r.bleu))
        ident = (f"{int(r.identity_identical)} identical, {int(r.identity_ties)} ties, {int(r.identity_ours_higher)} "
                 f"ours higher, {int(r.identity_theirs_higher)} {r.program} higher")
        out.append({**row, "bleu": float(r.bleu), "ms_per_word": ms,
                    "timed_by": f"this run, live ({r.command}; {r.allocator}): loading subtracted (whole input - "
                                "first line), interleaved with DE+EP, best of the repeats"
                                + (f"; DE+EP read on the same first {int(r.sentences)} verses" if head else "")
                                + (f"; DE+EP's hull on these verses tops out at BLEU {float(hy[-1]):.2f}, below this "
                                   f"run's: no ratio" if len(hy) and not den == den else ""),
                    "de+ep_ms_per_word": den, "time_ratio_vs_de+ep": ms / den if like and den > 0 else math.nan,
                    "identity_with_ours": f"{ident} (of {int(r.sentences)}; against ours {r.checked_against})",
                    "is_like": like, "is_head": head})
    return pd.DataFrame(out)


def _run_of(v: object) -> str:
    """A row's run id as text ('' where none: rows timed outside the repeat loop, such as repeat 0)."""
    return "" if v is None or v != v else str(v)


def moses_table(rows: pd.DataFrame, oracle: str | None = None) -> pd.DataFrame:
    """Every other search beside DE+EP at its BLEU: its ms/word, DE+EP's on the upper hull at that BLEU, the ratio.
    Ours and Moses live (``--live-peers`` rows) carry the ratio, with its interval; the oracle's recorded runs none."""
    rows, peer, timing = split_live(rows)
    pts = _head_points(rows)
    hx, hy = _de_ep_hull(pts, False)
    sx, sy = upper_hull(*(pts[pts.variant == "de+ep"][c].to_numpy() for c in ("hypotheses_per_word", "bleu")))
    n_all = int(pts.sentences.iloc[0])
    others = []
    for _, p in pts[pts.variant.isin(["normal", "cube"])].iterrows():
        others.append({"system": f"ours: {p.vector}", "config": p.vector, "verses": n_all, "bleu": float(p.bleu),
                       "ms_per_word": float(p.ms_per_word), "hypotheses_per_word": float(p.hypotheses_per_word),
                       "timed_by": "this run (interleaved with DE+EP, best of the repeats)"})
    df = pd.DataFrame(others)
    ours_rows = pd.Series(True, index=df.index)
    for i in df.index:  # ours and DE+EP: rows of one run, clock and thread count (report.common)
        ours_rows[i] = check_like(VS_DE_EP, rows[rows.vector == df.config[i]], rows[rows.variant == "de+ep"],
                                  where=f"moore_quirk_moses, {df.system[i]}")
    df["de+ep_ms_per_word"] = [cost_at(hx, hy, b) for b in df.bleu]
    df["time_ratio_vs_de+ep"] = (df.ms_per_word / df["de+ep_ms_per_word"]).where(ours_rows)
    df["is_like"], df["is_head"] = ours_rows, False
    live = live_rows(pts, rows, peer, timing) if len(peer) else pd.DataFrame()
    parts = [df, live]
    if oracle:
        # the oracle's Moses runs are recorded figures (another run, another machine; Moses v1's with a 10-best
        # list): shown, labelled, never divided by (issue 40)
        rec = oracle_points(oracle, n_all)
        rec["de+ep_ms_per_word"] = [cost_at(hx, hy, b) for b in rec.bleu]
        parts.append(rec.assign(is_like=False, is_head=False))
    df = pd.concat([x for x in parts if len(x)], ignore_index=True)
    df["de+ep_hypotheses_per_word"] = [cost_at(sx, sy, b) if not h and b == b else math.nan
                                       for b, h in zip(df.bleu, df.is_head)]
    df["time_ratio_vs_de+ep"] = df["time_ratio_vs_de+ep"].where(df.is_like.astype(bool))
    per: list[list[float]] = [[] for _ in range(len(df))]  # each repeat's point against that repeat's hull
    for g in _repeats(rows):
        pr = _head_points(g)
        rep_full, rep_head = _de_ep_hull(pr, False), (_de_ep_hull(pr, True) if "head_bleu" in pr else None)
        key = (_run_of(g.run_id.iloc[0]) if "run_id" in g.columns else "", int(g.repeat.iloc[0]))
        mine = dict(zip(pr.vector, pr.ms_per_word))
        t = kept(timing)
        if len(t):
            run = t.run_id.map(_run_of) if "run_id" in t.columns else pd.Series("", index=t.index)
            t = t[(run == key[0]) & (t.repeat == key[1])]
        theirs = dict(zip(t.config, t.ms_per_word)) if len(t) else {}
        for i, r in enumerate(df.itertuples()):
            if not r.is_like:
                continue
            ms = mine.get(r.config) if str(r.system).startswith("ours: ") else theirs.get(r.config)
            hull = rep_head if r.is_head else rep_full
            if ms is None or hull is None:
                continue
            b = cost_at(*hull, r.bleu)
            if b == b and b > 0:
                per[i].append(ms / b)
    first = ["system", "config", "verses", "bleu", "ms_per_word", "hypotheses_per_word", "timed_by",
             "de+ep_ms_per_word", "de+ep_hypotheses_per_word", "time_ratio_vs_de+ep"]
    df = df[[c for c in first if c in df.columns] + [c for c in df.columns if c not in first
                                                      and c not in ("is_like", "is_head")]]
    df = add_interval(df, "time_ratio_vs_de+ep", per)
    df["de+ep_max_bleu"] = float(hy[-1])
    df["de+ep_setting_at_max"] = pts[pts.variant == "de+ep"].sort_values(
        ["bleu", "ms_per_word"], ascending=[False, True]).iloc[0].vector
    return df


def moses_figure(rows: pd.DataFrame, oracle: str | None = None):
    """BLEU against ms/word on the Moses model: DE+EP's points and hull, the other searches as single points (those
    on all the verses: a live Moses v1 run on fewer verses is read against its own hull, in the table only)."""
    pts = points(split_live(rows)[0])
    g = pts[pts.variant == "de+ep"]
    hx, hy = upper_hull(g.ms_per_word.to_numpy(), g.bleu.to_numpy())
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter(g.ms_per_word, g.bleu, s=12, alpha=0.45, color="tab:green")
    ax.plot(hx, hy, color="tab:green", marker="o", label="DE+EP (Moses mode), upper hull")
    t = moses_table(rows, oracle)
    for _, r in t[(t.verses == int(pts.sentences.iloc[0])) & t.ms_per_word.notna()].iterrows():
        ours = str(r.system).startswith("ours")
        live = str(r.system).endswith("(live)")
        ax.scatter([r.ms_per_word], [r.bleu], marker="D" if ours else "P" if live else "*",
                   s=60 if ours or live else 110, label=f"{r.system}" + ("" if ours or live else " (oracle's time)"))
    ax.set_xscale("log")
    ax.set_xlabel("decoding time (ms per source word, 1 thread, log scale)")
    ax.set_ylabel("BLEU[%]")
    ax.set_title("Moore & Quirk DE+EP on the oracle's Moses model (dev verses) vs the other searches", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


MOSES_NOTES = ("Second configuration: the oracle's Moses model (lexicalized reordering, 5-gram LM, its weights, "
               "distortion limit 6, table-limit 20), dev verses (the first `sentences`; `verses`: those a row's BLEU "
               "and time cover), Moses mode (Moses' distortion limit, no final jump; DE = Moses v1's "
               "-early-distortion-cost), DE+EP explored by hill-climbing. `ours:` rows are our searches decoded in "
               "the same interleaved passes (in-process, per-sentence decoding time summed). `(live)` rows: Moses2 / "
               "Moses v1 decoding the same model in the same run, as points of the same repeat loop (same run_id, "
               "interleaved), 1 thread, no n-best, -output-hypo-score, each timed as a process with model loading "
               "subtracted (the run on the whole input minus the run on its first line, taken one after the other in "
               "each repeat; ms/word over the other verses' words; repeat 0 = the checked run, beside our exploration "
               "pass); their BLEU is their 1-best's on those verses; `identity_with_ours`: their 1-best lines against "
               "our search of the same setting (Moses2 strict: a line it scores above ours stops the run; Moses v1 "
               "counted: its normal search orders and recombines otherwise). Moses v1 decodes only the first "
               "`moses1_sentences` verses (4-7 minutes a pass on all 1,037): its rows are compared with DE+EP's upper "
               "hull on those same verses (our rows' time over verses 2..N and BLEU over the first N, from the same "
               "passes), not with the hull over all verses. `(recorded)` rows: the oracle's runs, BLEU of their "
               "1-bests computed here, time as the oracle recorded it (runs-quiet.tsv or runs.tsv; over all 1,037 dev "
               "verses, another machine and run, Moses v1's with a 10-best list): labelled `recorded` in timed_by, no "
               "ratio. de+ep_ms_per_word: DE+EP's upper hull read at the row's BLEU (NaN: above DE+EP's highest BLEU). "
               "time_ratio_vs_de+ep = the row's ms/word / DE+EP's at its BLEU (how many times slower than DE+EP), "
               "printed only where both sides are rows of one run, thread count and clock (report.common.check_like). "
               "hypotheses_per_word of our peers = their `created` counter (normal search: including extensions "
               "discarded by the bound before the LM).")


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame, peers: bool = False) -> list[metrics.Record]:
    """`bench moore_quirk` rows. exact per variant and setting (the settings themselves are chosen on deterministic
    measures): BLEU, output digest, hypotheses evaluated (a count); ratio: Pharaoh's and DE's time over DE+EP's at
    the highest BLEU all variants reach, read on the upper hulls (one run); with ``peers`` (the Moses-mode
    configuration) each of our other searches' time over DE+EP's at that search's BLEU."""
    out: list[metrics.Record] = []
    for (v, tt, bt, tl, bl), g in split_live(rows)[0].groupby(["variant", "ttable_threshold", "beam_threshold", "ttable_limit",
                                                "beam_limit"]):
        q = g.iloc[0]
        key = f"{q['mode']}-{v}-tt{tt:g}-bt{bt:g}-tl{int(tl)}-bl{int(bl)}-n{int(q.sentences)}"
        out.append(("moore_quirk", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
        out.append(("moore_quirk", key, "output_sha", metrics.distinct(g.output_sha), "exact"))
        out.append(("moore_quirk", key, "hypotheses_evaluated", metrics.distinct(g.hypotheses_evaluated.astype(int)),
                    "exact"))
    if peers:
        t = moses_table(rows)
        for _, r in t[t.system.astype(str).str.startswith("ours: ")].iterrows():  # Moses' live rows: no metric
            out += metrics.ratios("moore_quirk", "moses-" + str(r.config).replace(" ", "_").replace(",", ""),
                                  {"time_vs_de+ep_at_its_bleu": r["time_ratio_vs_de+ep"]})
        return out
    rt = ratio_table(rows)
    top = rt[rt.level == "highest"].set_index("variant")
    for v in ("pharaoh", "de"):
        if v in top.index:
            out += metrics.ratios("moore_quirk", "highest-bleu",
                                  {f"time_{v}_vs_de+ep": top.loc[v, "time_ratio_vs_de+ep"]})
    return out


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report moore_quirk`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("moore_quirk",
         help="Moore & Quirk 2007: Fig 2 (BLEU vs ms/word), Fig 3 (BLEU vs "
                      "hypotheses/word), ratios on the upper hulls at equal BLEU",
         settings=(
             arg("--rows", nargs="+", required=True),
             arg("--ratios", required=True, help="stem of the ratio table (.csv and .md)"),
             arg("--score-ratios", default=None, help="stem of the same table at equal mean model score (search quality, no BLEU noise)"),
             arg("--same-settings", required=True, help="stem of the same-settings table (.csv and .md)"),
             arg("--points", required=True, help="stem of the table of every point (.csv and .md)"),
             arg("--fig2", required=True, help="Fig 2 (.png)"),
             arg("--fig3", required=True, help="Fig 3 (.png)"),
             arg("--moses-rows", nargs="*", default=[], help="the second configuration's rows (Moses mode)"),
             arg("--moses-table", default=None, help="stem of the second configuration's table"),
             arg("--moses-figure", default=None, help="the second configuration's figure (.png)"),
             arg("--oracle", default=None, help="the Moses oracle folder (runs-quiet.tsv, runs.tsv, 1-bests)"),
             arg("--score-figure", default=None, help="Fig 2 with the mean model score instead of BLEU (.png)"),
             arg("--tuning", default=None, help="the tuning run's summary (`smtbench tune --summary`) when the rows "
                                                  "decoded tuned weights: the notes say so"),
             arg("--metrics", default=None),
         )),
)


def main(args: argparse.Namespace) -> int:
    from .common import INTERVAL_NOTE, read_rows, save_figure, write_table
    rows = read_rows(args.rows, "moore_quirk")
    write_table(ratio_table(rows), args.ratios,
                "Moore & Quirk 2007: ms/word and hypotheses/word at equal BLEU (upper hulls), ratios to DE+EP",
                notes=notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    if args.score_ratios:
        write_table(ratio_table(rows, "mean_score"), args.score_ratios,
                    "Moore & Quirk 2007 (ours): ms/word and hypotheses/word at equal mean model score (upper hulls)",
                    notes=notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    write_table(same_settings(rows), args.same_settings,
                "Moore & Quirk 2007: the variants compared at the same pruning settings", notes=notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    write_table(points(rows), args.points, "Moore & Quirk 2007: every setting decoded (Figs 2-3 points)",
                notes=notes(rows, args.tuning) + " " + INTERVAL_NOTE)
    save_figure(fig2(rows), args.fig2)
    save_figure(fig3(rows), args.fig3)
    if args.score_figure:
        save_figure(fig_score(rows), args.score_figure)
    recs = []
    if args.metrics:
        recs = regression_metrics(rows)
    if args.moses_rows:
        mrows = read_rows(args.moses_rows, "moore_quirk")
        if args.moses_table:
            write_table(moses_table(mrows, args.oracle), args.moses_table,
                        "Moore & Quirk DE+EP on the oracle's Moses model vs our and Moses' other searches, at equal "
                        "BLEU", notes=MOSES_NOTES + " " + INTERVAL_NOTE)
        if args.moses_figure:
            save_figure(moses_figure(mrows, args.oracle), args.moses_figure)
        if args.metrics:
            recs += regression_metrics(mrows, peers=True)
    if args.metrics:
        metrics.write(recs, args.metrics)
    return 0
