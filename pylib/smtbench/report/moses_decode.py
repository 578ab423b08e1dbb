"""The phrase-based model and its reference search against the real Moses (issue: the model, scored exactly as
Moses does): our normal stack search beside Moses2's and Moses v1's runs in the oracle."""
from __future__ import annotations

import pandas as pd

from .common import paper_values


def cube_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Our cube pruning beside Moses2's (the oracle's m2-cube400 run and quiet re-timing)."""
    q = rows[rows.kind == "quality"].iloc[-1]
    t = rows[rows.kind == "timing"]
    pv = paper_values("moses_oracle", "cube400").set_index("key")
    m2 = float(pv.loc["moses2", "paper_words_per_second"])
    best = float(t.words_per_second.max())
    return pd.DataFrame([
        {"system": f"ours, cube pruning, pop limit {int(q.pop_limit)}, -s {int(q.stack_size)}",
         "words_per_second": best, "words_per_second_median": float(t.words_per_second.median()),
         "vs_moses2_quiet": best / m2, "bleu": q.bleu, "identical_with_moses2": q.get("m2-cube400_identical"),
         "score_ge_moses2": q.get("m2-cube400_score_ge"), "nbest_rescore_mismatches": q.nbest_rescore_mismatches,
         "sentences": int(q.sentences), "paper_words_per_second": None, "paper_citation": "measured here"},
        {"system": "Moses2, -search-algorithm 1 -cube-pruning-pop-limit 400 -s 400", "words_per_second": None,
         "words_per_second_median": None, "vs_moses2_quiet": 1.0, "bleu": q.get("m2-cube400_bleu"),
         "identical_with_moses2": int(q.sentences), "score_ge_moses2": int(q.sentences),
         "nbest_rescore_mismatches": None, "sentences": int(q.sentences), "paper_words_per_second": m2,
         "paper_citation": pv.loc["moses2", "paper_citation"]},
    ])


def normal_table(rows: pd.DataFrame) -> pd.DataFrame:
    q = rows[rows.kind == "quality"].iloc[-1]
    t = rows[rows.kind == "timing"]
    wps_best = float(t.words_per_second.max())
    wps_median = float(t.words_per_second.median())
    pv = paper_values("moses_oracle", "normal200").set_index("key")
    m2_wps = float(pv.loc["moses2", "paper_words_per_second"])
    out = [
        {"system": f"ours, normal search, -s {int(q.stack_size)}", "words_per_second": wps_best,
         "words_per_second_median": wps_median, "vs_moses2_quiet": wps_best / m2_wps, "bleu": q.bleu,
         "identical_with_moses2": q.get("m2-normal200_identical"), "score_ge_moses2": q.get("m2-normal200_score_ge"),
         "nbest_entries_rescored": q.nbest_entries, "nbest_rescore_mismatches": q.nbest_rescore_mismatches,
         "sentences": int(q.sentences), "paper_words_per_second": None, "paper_citation": "measured here"},
        {"system": "Moses2, -search-algorithm 0 -s 200", "words_per_second": None, "words_per_second_median": None,
         "vs_moses2_quiet": 1.0, "bleu": q.get("m2-normal200_bleu"), "identical_with_moses2": int(q.sentences),
         "score_ge_moses2": int(q.sentences), "nbest_entries_rescored": None, "nbest_rescore_mismatches": None,
         "sentences": int(q.sentences), "paper_words_per_second": m2_wps,
         "paper_citation": pv.loc["moses2", "paper_citation"]},
        {"system": "Moses v1, -search-algorithm 0 -s 200", "words_per_second": None, "words_per_second_median": None,
         "vs_moses2_quiet": float(pv.loc["moses1", "paper_words_per_second"]) / m2_wps,
         "bleu": q.get("m1-normal200_bleu"),
         "identical_with_moses2": pv.loc["moses1", "paper_identical_with_moses2"], "score_ge_moses2": None,
         "nbest_entries_rescored": None, "nbest_rescore_mismatches": None, "sentences": int(q.sentences),
         "paper_words_per_second": float(pv.loc["moses1", "paper_words_per_second"]),
         "paper_citation": pv.loc["moses1", "paper_citation"]},
    ]
    return pd.DataFrame(out)


NOTES = ("Ours: `smtbench bench decode` on the oracle's model (moses.ini, dev books), one thread, decode time "
         "excluding model loading, best and median over the timed passes (no n-best, as the oracle's quiet "
         "re-timing). BLEU: sacrebleu on the tokenized lowercased text (--tokenize none), measured here for every "
         "system from its output. identical/score_ge: 1-best lines equal to Moses2's, and model score >= Moses2's "
         "- 1e-3. Every n-best entry (10 per sentence, with its segmentation) was rescored by the independent "
         "derivation scorer (kenlm module, text tables). vs_moses2_quiet compares with the oracle's quiet Moses2 "
         "figure on this machine type (a different run, not interleaved); paper_* columns: the oracle's figures.")


def with_interval(table: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """vs_moses2_quiet's 95% interval for our row (the first): each timed repeat's words/s over the oracle's fixed
    Moses2 figure (that figure is a number from another run, so only our repeats vary); n_repeats."""
    from ..protocol import kept
    from .common import add_interval

    t = kept(rows[rows.kind == "timing"])
    ref = table["paper_words_per_second"].dropna()
    m2 = float(ref.iloc[0]) if len(ref) else float("nan")
    per = [[float(w) / m2 for w in t.words_per_second.dropna()] if m2 == m2 else []] + [[]] * (len(table) - 1)
    return add_interval(table, "vs_moses2_quiet", per)


# --- live peers: Moses2 / Moses v1 decoding the same model and input in the same run (`bench moses_decode --peers`)

PEER_LABELS = {"ours": "ours", "moses2": "Moses2", "moses": "Moses v1"}


def _search_label(q: pd.Series) -> str:
    if q.search == "cube":
        return f"cube pruning, pop limit {int(q.pop_limit)}, -s {int(q.stack_size)}"
    return f"normal search, -s {int(q.stack_size)}"


def live_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per system of `bench moses_decode --peers`: words per second (median over the repeats; each repeat times
    every system once, as a process, loading excluded alike), ours / theirs per repeat (median, min, max over the
    repeats: the ratio is taken within a repeat, never across), BLEU, and the 1-best agreement with ours. A peer
    that was not built reads so instead of numbers."""
    q = rows[rows.kind == "quality"].iloc[-1]
    peers = rows[rows.kind == "peer"] if "system" in rows else rows.iloc[0:0]
    from ..protocol import kept
    timing = kept(rows[rows.kind == "peer_timing"]) if "system" in rows else rows.iloc[0:0]  # retaken: left out
    label = _search_label(q)
    ours_t = timing[timing.system == "ours"].set_index("repeat").words_per_second
    out = []
    for system in ["ours"] + [s for s in ("moses2", "moses") if s in set(peers.get("system", []))]:
        p = peers[peers.system == system].iloc[-1] if system != "ours" else None
        row = {"system": f"{PEER_LABELS[system]}, {label}", "status": "ok" if p is None else p.status,
               "words_per_second_median": None, "ours_speedup_median": None, "ours_speedup_paired": None,
               "ours_speedup_ci_low": None,
               "ours_speedup_ci_high": None, "ours_speedup_min": None,
               "ours_speedup_max": None, "n_repeats": None, "bleu": q.bleu if p is None else p.get("bleu"),
               "identical_with_ours": int(q.sentences) if p is None else p.get("ours_vs_identical"),
               "ours_score_ge": int(q.sentences) if p is None else p.get("ours_vs_score_ge"),
               # the identity rule (decode.compare.peer_identity): differing lines that tie at the peer's printed
               # precision, lines ours scores higher, lines theirs scores higher (Moses v1 only: Moses2's stop the
               # run); rows from before the rule have ours_vs_better / ours_vs_worse at a 2e-3 tolerance
               "ties_with_ours": None if p is None else p.get("ours_vs_ties"),
               "ours_higher": None if p is None else p.get("ours_vs_ours_higher", p.get("ours_vs_better")),
               "theirs_higher": None if p is None else p.get("ours_vs_theirs_higher", p.get("ours_vs_worse")),
               "sentences": int(q.sentences), "threads": None, "command": None if p is None else p.get("command")}
        t = timing[timing.system == system].set_index("repeat").words_per_second
        if len(t):
            ratios = (ours_t / t).dropna()
            from ..protocol import ratio_ci
            ci = ratio_ci(list(ratios))  # the 95% interval of the per-repeat ratios (smtbench.protocol)
            row.update(words_per_second_median=float(t.median()), n_repeats=int(len(t)),
                       ours_speedup_median=float(ratios.median()),
                       ours_speedup_paired=ci.estimate if ci.n >= 2 else None, ours_speedup_ci_low=ci.low,
                       ours_speedup_ci_high=ci.high, ours_speedup_min=float(ratios.min()),
                       ours_speedup_max=float(ratios.max()),
                       threads=int(timing[timing.system == system].threads.iloc[0]))
        out.append(row)
    df = pd.DataFrame(out)
    for col in ("identical_with_ours", "ours_score_ge", "ties_with_ours", "ours_higher", "theirs_higher", "n_repeats",
                "threads"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df


def live_notes(rows: pd.DataFrame) -> str:
    q = rows[rows.kind == "quality"].iloc[-1]
    return (f"Model: {q.model} ({int(q.sentences)} sentences, {int(q.source_words)} source words). Every system "
            "decodes the same input with the same model and search settings in the same run. Timing: each repeat "
            "runs every system once as a process, in an order that reverses from one repeat to the next; decoding "
            "time = the wall time on the whole input minus the wall time of the same command on its first line "
            "only (loading, start-up and one sentence), so loading is excluded for every system alike; words/s "
            "over the words after the first line. ours_speedup = ours / that system's words per second within "
            "each repeat (median, min, max over the repeats). identical_with_ours / ours_score_ge: 1-best lines "
            "equal to ours, and our model score >= theirs - 2e-3 (Moses prints 3 decimals). The identity rule "
            "(smtbench.decode.compare.peer_identity): a line where Moses2 scores above ours stops the run; "
            "ties_with_ours counts differing lines whose model scores tie at the peer's printed precision, "
            "ours_higher / theirs_higher the lines one side scores higher (Moses v1's theirs_higher: search "
            "differences of its normal search, counted, not fatal; empty ties: rows from before the rule). BLEU: sacrebleu "
            "--tokenize none on the tokenized lowercased text. Ours is also checked inside the run: every n-best "
            "entry rescored by the independent derivation scorer (quality row).")
