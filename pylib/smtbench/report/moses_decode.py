"""The phrase-based model and its reference search against the real Moses (issue: the model, scored exactly as
Moses does): our normal stack search beside Moses2's and Moses v1's runs in the oracle."""
from __future__ import annotations

import argparse

import pandas as pd

from .common import Ratio, check_like, declare, recorded_values
from . import metrics
from ..experiments.frame import Verb, arg, counts_arg


def _recorded(table: str) -> pd.DataFrame:
    return recorded_values("moses_oracle", table).set_index("key")


def cube_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Our cube pruning on the oracle's model beside Moses2's recorded run (m2-cube400 and its quiet re-timing): the
    recorded figure is shown, labelled, with no ratio (another run on another machine: issue 40)."""
    q = rows[rows.kind == "quality"].iloc[-1]
    t = rows[rows.kind == "timing"]
    rec = _recorded("cube400")
    return pd.DataFrame([
        {"system": f"ours, cube pruning, pop limit {int(q.pop_limit)}, -s {int(q.stack_size)}",
         "words_per_second": float(t.words_per_second.max()),
         "words_per_second_median": float(t.words_per_second.median()), "recorded_words_per_second": None,
         "recorded": "measured here", "bleu": q.bleu, "identical_with_moses2": q.get("m2-cube400_identical"),
         "score_ge_moses2": q.get("m2-cube400_score_ge"), "nbest_rescore_mismatches": q.nbest_rescore_mismatches,
         "sentences": int(q.sentences), "recorded_citation": None},
        {"system": "Moses2, -search-algorithm 1 -cube-pruning-pop-limit 400 -s 400", "words_per_second": None,
         "words_per_second_median": None,
         "recorded_words_per_second": float(rec.loc["moses2", "recorded_words_per_second"]),
         "recorded": rec.loc["moses2", "recorded"], "bleu": q.get("m2-cube400_bleu"),
         "identical_with_moses2": int(q.sentences), "score_ge_moses2": int(q.sentences),
         "nbest_rescore_mismatches": None, "sentences": int(q.sentences),
         "recorded_citation": rec.loc["moses2", "recorded_citation"]},
    ])


def normal_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Our normal search on the oracle's model beside Moses2's and Moses v1's recorded runs (labelled, no ratio)."""
    q = rows[rows.kind == "quality"].iloc[-1]
    t = rows[rows.kind == "timing"]
    rec = _recorded("normal200")
    out = [
        {"system": f"ours, normal search, -s {int(q.stack_size)}", "words_per_second": float(t.words_per_second.max()),
         "words_per_second_median": float(t.words_per_second.median()), "recorded_words_per_second": None,
         "recorded": "measured here", "bleu": q.bleu,
         "identical_with_moses2": q.get("m2-normal200_identical"), "score_ge_moses2": q.get("m2-normal200_score_ge"),
         "nbest_entries_rescored": q.nbest_entries, "nbest_rescore_mismatches": q.nbest_rescore_mismatches,
         "sentences": int(q.sentences), "recorded_citation": None},
        {"system": "Moses2, -search-algorithm 0 -s 200", "words_per_second": None, "words_per_second_median": None,
         "recorded_words_per_second": float(rec.loc["moses2", "recorded_words_per_second"]),
         "recorded": rec.loc["moses2", "recorded"], "bleu": q.get("m2-normal200_bleu"),
         "identical_with_moses2": int(q.sentences), "score_ge_moses2": int(q.sentences),
         "nbest_entries_rescored": None, "nbest_rescore_mismatches": None, "sentences": int(q.sentences),
         "recorded_citation": rec.loc["moses2", "recorded_citation"]},
        {"system": "Moses v1, -search-algorithm 0 -s 200", "words_per_second": None, "words_per_second_median": None,
         "recorded_words_per_second": float(rec.loc["moses1", "recorded_words_per_second"]),
         "recorded": rec.loc["moses1", "recorded"], "bleu": q.get("m1-normal200_bleu"),
         "identical_with_moses2": rec.loc["moses1", "recorded_identical_with_moses2"], "score_ge_moses2": None,
         "nbest_entries_rescored": None, "nbest_rescore_mismatches": None, "sentences": int(q.sentences),
         "recorded_citation": rec.loc["moses1", "recorded_citation"]},
    ]
    return pd.DataFrame(out)


NOTES = ("Ours: `smtbench bench decode` on the oracle's model (moses.ini, dev books), one thread, decode time "
         "excluding model loading, best and median over the timed passes (no n-best, as the oracle's quiet "
         "re-timing). BLEU: sacrebleu on the tokenized lowercased text (--tokenize none), measured here for every "
         "system from its output. identical/score_ge: 1-best lines equal to Moses2's, and model score >= Moses2's "
         "- 1e-3. Every n-best entry (10 per sentence, with its segmentation) was rescored by the independent "
         "derivation scorer (kenlm module, text tables). recorded_words_per_second: the oracle's recorded Moses "
         "runs (resources/recorded_runs.csv), labelled in `recorded` with the machine and conditions they were "
         "taken under (Moses v1's with a 10-best list on a loaded machine); they are another run on another "
         "machine, so no ratio stands beside them (issue 40): the live comparison on the same model, in the same "
         "run, is the table moses_decode_{normal,cube}.")


# --- the oracle tables (moses_decode_{normal,cube}_oracle): the live comparison on the oracle's model (ours and
# Moses2 timed as processes in the same run: `bench moses_decode --oracle ... --peers moses2`), then the oracle's
# recorded Moses runs, labelled, with no ratio beside them

RECORDED_RUNS = {"normal": ("normal200", "m2-normal200", (("moses2", "Moses2, -search-algorithm 0 -s 200"),
                                                          ("moses1", "Moses v1, -search-algorithm 0 -s 200"))),
                 "cube": ("cube400", "m2-cube400", (("moses2", "Moses2, -search-algorithm 1 "
                                                                "-cube-pruning-pop-limit 400 -s 400"),))}
NOT_LIVE = ("not timed live: rows from before issue 40 (the oracle run had no --peers); re-run "
            "moses_decode_oracle_run")


def oracle_table(rows: pd.DataFrame, moses1: pd.DataFrame | None = None) -> pd.DataFrame:
    """The oracle's model: the live rows of :func:`live_table` (ours and each peer as processes in the same run,
    ``ours_speedup`` with its interval; rows written before the oracle run had live peers: ours only, and a Moses2
    row saying it was not timed live, no ratio), ours in-process (``in_process_*``: the timed passes inside
    `bench moses_decode`), each live row's agreement with the oracle's recorded Moses2 output, then the oracle's
    recorded Moses runs (``recorded``: "recorded, <machine/date>"; no ratio beside them, issue 40)."""
    q = rows[rows.kind == "quality"].iloc[-1]
    search = "cube" if q.search == "cube" else "normal"
    table, m2, recorded_systems = RECORDED_RUNS[search]
    live = live_table(rows)
    live.insert(1, "timed", ["live, this run (a process, loading subtracted)" if s == "ok" and n == n else
                             "in process only (in_process_*)" if s == "ok" and str(name).startswith("ours") else None
                             for s, n, name in zip(live.status, live.n_repeats.astype(float), live.system)])
    if not live.system.str.startswith("Moses2").any():
        label = _search_label(q)
        live = pd.concat([live, pd.DataFrame([{"system": f"Moses2, {label}", "status": NOT_LIVE,
                                               "timed": None, "sentences": int(q.sentences)}])],
                         ignore_index=True)
    t = rows[rows.kind == "timing"]
    ours = live.system.str.startswith("ours")
    live["in_process_words_per_second"] = [float(t.words_per_second.max()) if o and len(t) else None for o in ours]
    live["in_process_words_per_second_median"] = [float(t.words_per_second.median()) if o and len(t) else None
                                                  for o in ours]
    live["identical_with_recorded_moses2"] = [q.get(f"{m2}_identical") if o else None for o in ours]
    if moses1 is not None and len(moses1):  # Moses v1 live: a run of its own on the first N verses
        live = pd.concat([live, moses1_rows(moses1)], ignore_index=True)
    live["recorded_words_per_second"] = None
    live["recorded"] = None
    live["recorded_citation"] = None
    rec = _recorded(table)
    out = []
    for key, name in recorded_systems:
        run = "m1-normal200" if key == "moses1" else m2
        out.append({"system": f"{name} (recorded)", "status": "recorded", "timed": rec.loc[key, "recorded"],
                    "recorded_words_per_second": float(rec.loc[key, "recorded_words_per_second"]),
                    "recorded": rec.loc[key, "recorded"], "bleu": q.get(f"{run}_bleu"),
                    "identical_with_ours": q.get(f"{run}_identical"),
                    "ours_score_ge": q.get(f"{run}_score_ge") if key == "moses2" else None,
                    "identical_with_recorded_moses2": int(q.sentences) if key == "moses2"
                    else rec.loc[key].get("recorded_identical_with_moses2"),
                    "sentences": int(q.sentences), "recorded_citation": rec.loc[key, "recorded_citation"]})
    df = pd.concat([live, pd.DataFrame(out)], ignore_index=True)
    for col in ("identical_with_ours", "ours_score_ge", "identical_with_recorded_moses2", "n_repeats", "threads",
                "sentences"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df


def moses1_rows(moses1: pd.DataFrame) -> pd.DataFrame:
    """The live rows of the oracle's Moses v1 run (`bench moses_decode --peers moses --sentences N`): ours and Moses
    v1 on the first N dev verses, timed in that run (ours_speedup within it), named by the verses they cover."""
    q = moses1[moses1.kind == "quality"].iloc[-1]
    t = live_table(moses1)
    n = int(q.sentences)
    t["system"] = [f"{s} (own run: first {n} dev verses)" for s in t.system]
    t.insert(1, "timed", [f"live, own run on the first {n} dev verses (a process, loading subtracted)"
                          if st == "ok" else None for st in t.status])
    return t


def oracle_notes(rows: pd.DataFrame, moses1: pd.DataFrame | None = None) -> str:
    q = rows[rows.kind == "quality"].iloc[-1]
    peers = rows[rows.kind == "peer"] if "system" in rows else rows.iloc[0:0]
    head = ("The oracle's model (its moses.ini, the dev books). What each row compares: the `live` rows decode the "
            "same input with the same model, limits and one thread in the same run, each timed as a process "
            "(loading subtracted alike, interleaved repeats), and ours_speedup divides ours by that row's system "
            "within each repeat, with its interval (paired bootstrap); in_process_words_per_second: ours timed "
            "inside `bench moses_decode` (best, median over its passes), not a process, no ratio; "
            "identical_with_recorded_moses2: 1-best lines equal to the oracle's recorded Moses2 output. The "
            "`(recorded)` rows are the oracle's recorded Moses runs (resources/recorded_runs.csv), labelled in "
            "`recorded` with the machine and conditions they were taken under (Moses v1's with a 10-best list on a "
            "loaded machine): another run on another machine, so no ratio stands beside them (issue 40); their "
            "BLEU, identical_with_ours and ours_score_ge are computed here from their recorded outputs.")
    if moses1 is not None and len(moses1):
        n = int(moses1[moses1.kind == "quality"].iloc[-1].sentences)
        head += (f" Moses v1 (~65 words/s here) is timed live in a run of its own on the first {n} dev verses "
                 "(rows `(own run: ...)`): ours and Moses v1 both re-timed in that run, its ratio within it; never "
                 "divided by the all-verses rows.")
    else:
        head += (" Moses v1 is not timed live on the oracle's model here (config moses_decode.oracle_moses1_sentences: "
                 "0); its live row is the trained model's table moses_decode_normal.")
    if not len(peers):
        head += (" These rows predate the live peers of the oracle run (issue 40): no system was timed beside ours "
                 "and no ratio is printed; the lead re-measures with the rule moses_decode_oracle_run.")
    return head + " " + (_live_notes(q) + _entries_note(rows) if len(peers) else "")


# --- live peers: Moses2 / Moses v1 / a user's entry of config/peers.yaml decoding the same model and input in the same
# run (`bench moses_decode --peers`)

#: the tables' names of rows written before peer rows carried their entry's ``label``
PEER_LABELS = {"ours": "ours", "moses2": "Moses2", "moses": "Moses v1"}
MOSES_PEERS = ("moses2", "moses")  # listed first, in this order; other entries follow in the run's order


def _search_label(q: pd.Series) -> str:
    if q.search == "cube":
        return f"cube pruning, pop limit {int(q.pop_limit)}, -s {int(q.stack_size)}"
    return f"normal search, -s {int(q.stack_size)}"


# the live table's one ratio (report.common.declare): ours / the peer's words per second within a repeat, both timed as
# processes in the same run, at the same thread count and by the same clock (refused otherwise)
OURS_SPEEDUP = Ratio("ours_speedup", num="ours, as a process", den="the row's system (Moses2 or Moses v1), as a process")
declare("moses_decode_normal", OURS_SPEEDUP)
declare("moses_decode_cube", OURS_SPEEDUP)


#: the live tables' fixed count points (smtbench.counts): ours and Moses2 under callgrind on the Moses oracle's model,
#: the first sentences of its dev.es (a fixed point beside this table's sweep; its settings in the point's `what`)
COUNT_POINTS = {"cube": ("cube-p400-s400", "moses2-cube-p400-s400"), "normal": ("normal-s100", "moses2-normal-s100")}


def with_counts(table: pd.DataFrame, counts_csv: str | None, search: str) -> pd.DataFrame:
    """A live table with the count columns on its Moses2 row, beside the ratio (:func:`common.with_counts`)."""
    from .common import with_counts as _with_counts

    return _with_counts(table, counts_csv,
                        lambda r: COUNT_POINTS[search] if str(r["system"]).startswith("Moses2") else None,
                        after="ours_speedup_ci_high")


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
    if "system" not in timing:  # rows without live peers (the oracle's before issue 40): ours only, no ratio
        timing = pd.DataFrame({"system": pd.Series(dtype=object), "repeat": pd.Series(dtype=int),
                               "words_per_second": pd.Series(dtype=float), "threads": pd.Series(dtype=float)})
    ours_t = timing[timing.system == "ours"].set_index("repeat").words_per_second
    out = []
    for system in systems_of(peers):
        p = peers[peers.system == system].iloc[-1] if system != "ours" else None
        row = {"system": f"{peer_label(p, system)}, {label}", "status": "ok" if p is None else p.status,
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
               "sentences": int(q.sentences), "threads": None,
               "allocator": None if p is None or p.status != "ok" else allocator(p, system),  # not run: none
               "command": None if p is None else p.get("command")}
        t = timing[timing.system == system].set_index("repeat").words_per_second
        if len(t) and not check_like(OURS_SPEEDUP, timing[timing.system == "ours"], timing[timing.system == system],
                                     where=f"moses_decode, {row['system']}"):
            t = t.iloc[0:0]  # timed outside the run's repeats: no ratio
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


def systems_of(peers: pd.DataFrame) -> list[str]:
    """The table's systems: ours, Moses2 and Moses v1 where run, then the other peers in the order of their rows."""
    names = list(dict.fromkeys(peers.get("system", [])))
    return ["ours"] + [s for s in MOSES_PEERS if s in names] + [s for s in names if s not in ("ours", *MOSES_PEERS)]


def peer_label(row: pd.Series | None, system: str) -> str:
    """A system's name in the table: its peer entry's label as the run recorded it, else the built-in one."""
    v = None if row is None else row.get("label")
    return v if isinstance(v, str) and v else PEER_LABELS.get(system, system)


UNRECORDED_ALLOCATOR = "not recorded (rows before issue 40; tools/build_moses.sh then passed --without-tcmalloc)"


def allocator(row: pd.Series, program: str) -> str:
    """How a peer's program of the row was built: its malloc, as the run read it from the binary
    (moses_peer.allocator_of; the rows' ``<program>_allocator`` for Moses' programs, a peer row's ``allocator``
    for any entry); rows from before that say so."""
    v = row.get(f"{program}_allocator")
    if not isinstance(v, str):
        v = row.get("allocator")
    return str(v) if isinstance(v, str) else UNRECORDED_ALLOCATOR


def live_notes(rows: pd.DataFrame) -> str:
    q = rows[rows.kind == "quality"].iloc[-1]
    return _live_notes(q) + _entries_note(rows)


def _entries_note(rows: pd.DataFrame) -> str:
    """What a table with peers other than Moses' adds (nothing for Moses2 / Moses v1 only): where the entries come
    from, and how a peer that prints no model scores is checked."""
    peers = rows[rows.kind == "peer"] if "system" in rows else rows.iloc[0:0]
    others = [s for s in systems_of(peers) if s not in ("ours", *MOSES_PEERS)]
    if not others:
        return ""
    text = (f" Peers {', '.join(others)}: entries of config/peers.yaml or a --peers-file (smtbench.peers), run and "
            "timed as every system above; command: the command as run (its program's path shortened to its name); "
            "allocator: read from the program's binary.")
    if "identity" in peers and (peers.identity == "lines").any():
        text += (" A peer that prints no model scores is checked on its text only: identical_with_ours counts its "
                 "lines equal to ours, the other sentences differ, unjudged (its score columns stay empty).")
    return text


def _live_notes(q: pd.Series) -> str:
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
            "entry rescored by the independent derivation scorer (quality row). allocator: the malloc each Moses "
            "binary runs with, read from the binary by the run (smtbench.moses_peer.allocator_of; Moses' own build "
            "links tcmalloc where installed, tools/build_moses.sh installs it).")


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench moses_decode` rows. exact: identical lines and scores >= Moses2's, n-best rescoring mismatches, BLEU (2
    decimals) and the digest of the 1-best output (the search is deterministic). No ratio: the Moses figures come
    from another run."""
    out: list[metrics.Record] = []
    for _, q in rows[rows.kind == "quality"].iterrows():
        pop = q.get("pop_limit")
        key = f"{q.search}-s{int(q.stack_size)}" + (f"-p{int(pop)}" if pd.notna(pop) else "") + f"-n{int(q.sentences)}"
        for metric in ("m2-normal200_identical", "m2-normal200_score_ge", "m2-cube400_identical", "m2-cube400_score_ge",
                       "nbest_rescore_mismatches", "output_sha"):
            if metric in q and pd.notna(q[metric]):
                v = q[metric]
                out.append(("moses_decode", key, metric, str(int(v)) if not isinstance(v, str) else v, "exact"))
        out.append(("moses_decode", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
    if "system" in rows:  # live peers (bench moses_decode --peers): agreement exact, speed-up a ratio of the same run
        for _, p in rows[(rows.kind == "peer") & (rows.get("status") == "ok")].iterrows():
            pop = p.get("pop_limit")
            key = (f"{p.search}-s{int(p.stack_size)}" + (f"-p{int(pop)}" if pd.notna(pop) else "")
                   + f"-n{int(p.sentences)}-{p.system}")
            out.append(("moses_decode", key, "identical_with_ours", str(int(p.ours_vs_identical)), "exact"))
            out.append(("moses_decode", key, "bleu", f"{float(p.bleu):.2f}", "exact"))
            from ..protocol import kept
            same = (rows.kind == "peer_timing") & (rows.search == p.search) & (rows.sentences == p.sentences)
            if "model" in rows and isinstance(p.get("model"), str):  # the trained and oracle runs: one search each
                same &= rows.model == p.model
            t = kept(rows[same])  # retaken repeats left out
            if not check_like(OURS_SPEEDUP, t[t.system == "ours"], t[t.system == p.system], where=f"moses_decode {key}"):
                continue  # timed outside the run's repeats: no ratio
            ours = t[t.system == "ours"].set_index("repeat").words_per_second
            theirs = t[t.system == p.system].set_index("repeat").words_per_second
            r = (ours / theirs).dropna()
            if len(r):
                out.append(("moses_decode", key, "ours_speedup", f"{float(r.median()):.4f}", "ratio"))
    return out


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report moses_decode`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("moses_decode",
         help="ours vs live Moses2/Moses v1 tables from `bench moses_decode --peers` rows",
         description="--rows/--cube-rows: rows of `bench moses_decode --search normal|cube --peers ...` (the live "
                             "comparison); --oracle-rows/--oracle-cube-rows: rows of `bench moses_decode --oracle ...` on the "
                             "oracle's model, added as a second table where present.",
         settings=(
             arg("--rows", nargs="+", required=True, help="rows of `bench moses_decode --search normal`"),
             arg("--table", required=True, help="output stem (.csv and .md)"),
             arg("--cube-rows", nargs="+", default=None, help="rows of `bench moses_decode --search cube`"),
             arg("--cube-table", default=None, help="output stem for the cube-pruning table"),
             arg("--oracle-rows", default=None, help="rows of the oracle-model normal run (optional)"),
             arg("--oracle-cube-rows", default=None, help="rows of the oracle-model cube run (optional)"),
             arg("--oracle-moses1-rows", default=None,
                 help="rows of the oracle-model Moses v1 run (normal search, --peers moses on the first N verses: "
                      "rows of the oracle normal table; optional)"),
             arg("--oracle-table", default=None, help="output stem of the oracle normal table"),
             arg("--oracle-cube-table", default=None, help="output stem of the oracle cube table"),
             arg("--metrics", help="regression metrics CSV"),
             counts_arg(),
         )),
)


DECODE_ROWS = ("decode_normal", "decode_cube")


def _table(rows, stem: str, title: str, counts: str | None = None, search: str = "normal",
           oracle: bool = False, moses1: pd.DataFrame | None = None) -> None:
    """One table; a live table takes the count columns of ``search``'s count points from ``counts``; ``oracle``:
    the oracle model's table (:func:`oracle_table`: live rows, then the recorded runs)."""
    from .common import COUNT_NOTE, INTERVAL_NOTE, write_table

    if oracle and (rows.kind == "quality").any():
        write_table(oracle_table(rows, moses1), stem, title, notes=oracle_notes(rows, moses1) + " " + INTERVAL_NOTE)
    elif "system" in rows and rows.kind.isin(["peer", "peer_timing"]).any():
        write_table(with_counts(live_table(rows), counts, search), stem, title,
                    notes=live_notes(rows) + " " + INTERVAL_NOTE + (" " + COUNT_NOTE if counts else ""))
    elif (rows.kind == "quality").any() and any(c.startswith("m2-") for c in rows.columns):
        fn = cube_table if (rows[rows.kind == "quality"].search == "cube").all() else normal_table
        write_table(fn(rows), stem, title + " (the oracle's recorded runs: labelled, no ratio)", notes=NOTES)
    else:
        raise ValueError(f"{stem}: the rows have neither live peers (bench moses_decode --peers) nor oracle runs")


def main(args: argparse.Namespace) -> int:
    import pandas as pd

    from .common import check_counts, read_rows

    rows = read_rows(args.rows, DECODE_ROWS)
    check_counts(args.counts)  # a bad --counts stops here, before any output (or folder) is made
    _table(rows, args.table, "Normal stack search: ours vs Moses2 and Moses v1, same model, same run", args.counts)
    frames = [rows]
    if args.cube_rows and args.cube_table:
        cube = read_rows(args.cube_rows, DECODE_ROWS)
        frames.append(cube)
        _table(cube, args.cube_table, "Cube pruning: ours vs Moses2, same model, same run", args.counts, "cube")
    for path, stem, title in ((args.oracle_rows, args.oracle_table, "Normal stack search vs Moses2 (and Moses v1, "
                                                                     "recorded)"),
                              (args.oracle_cube_rows, args.oracle_cube_table, "Cube pruning vs Moses2")):
        if path and stem:
            o = read_rows([path], DECODE_ROWS)
            frames.append(o)
            m1 = read_rows([args.oracle_moses1_rows], DECODE_ROWS) if args.oracle_moses1_rows and path == \
                args.oracle_rows else None
            if m1 is not None:
                frames.append(m1)
            _table(o, stem, title + ", oracle model, dev books (live in one run; the oracle's recorded runs "
                   "labelled, no ratio)", oracle=True, moses1=m1)
    if args.metrics:
        metrics.write(regression_metrics(pd.concat(frames, ignore_index=True)), args.metrics)
    return 0
