"""Regression metrics (``experiment,key,metric,value,kind``) of each experiment, computed from the rows and
tables the experiment already writes; `smtbench report regress` compares them with the committed baseline.

``exact``: correctness values that are bit-identical across runs and machines (checksums of scores summed in
a fixed order, digests of deterministic outputs, counts, a perplexity rounded to a fixed number of digits).
``ratio``: speed-ups measured inside one run (formatted to 4 decimals); ``ci``: a ratio's 95% interval over the
run's paired repeats, as two metrics ``<ratio>_ci_low`` / ``<ratio>_ci_high`` beside it (smtbench.protocol; the
regression check judges a ratio's drift against them). GPU rows never contribute (CI has no
GPU), and no metric key carries a machine-dependent number such as "all cores"."""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..ioutil import atomic_open

COLUMNS = ["experiment", "key", "metric", "value", "kind"]
Record = tuple[str, str, str, str, str]


def write(records: Iterable[Record], path: str | Path) -> int:
    """Write metric records as CSV (atomically); returns how many."""
    recs = list(records)
    for r in recs:
        if len(r) != 5 or r[4] not in ("exact", "ratio", "ci"):
            raise ValueError(f"bad metric record {r!r}: want (experiment, key, metric, value, exact|ratio|ci)")
    with atomic_open(path) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(recs)
    return len(recs)


def _ratio(x) -> str | None:
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else f"{x:.4f}"


def _distinct(values: pd.Series) -> str:
    """The distinct non-null values, sorted and comma-joined: one value when the run's points agree (the
    benchmarks check that they do); a regression shows as more than one."""
    return ",".join(sorted({str(v) for v in values.dropna()}))


def _ratios(exp: str, key: str, pairs: dict[str, object], intervals: object = None) -> list[Record]:
    """Ratio records; ``intervals``: a table row (or dict) with ``<metric>_ci_low`` / ``_ci_high`` for any of them,
    or a dict metric -> list of per-repeat ratios (their interval is computed here)."""
    from ..protocol import ratio_ci

    out = []
    for metric, v in pairs.items():
        s = _ratio(v) if v is not None else None
        if s is None:
            continue
        out.append((exp, key, metric, s, "ratio"))
        lo = hi = None
        if isinstance(intervals, dict) and isinstance(intervals.get(metric), list):
            c = ratio_ci(intervals[metric])
            lo, hi = c.low, c.high
        elif intervals is not None:
            get = intervals.get if isinstance(intervals, dict) else (lambda k, d=None: getattr(intervals, k, d))
            lo, hi = get(f"{metric}_ci_low"), get(f"{metric}_ci_high")
        for suffix, b in (("_ci_low", lo), ("_ci_high", hi)):
            sb = _ratio(b) if b is not None else None
            if sb is not None:
                out.append((exp, key, metric + suffix, sb, "ci"))
    return out


def mokry_hash(rows: pd.DataFrame) -> list[Record]:
    """`bench mokry_hash` rows. exact per (table size, mode): the lookup checksum of hits and misses (found values, or
    the key of a miss: independent of layout, thread count, queue size and fill order). Mode 'line' (random line
    reads, the machine's floor) is left out: it folds whatever the lines hold, and the table is filled by several
    threads, so it differs from run to run. ratio: best prefetch-queue speed-up per (table size, mode, threads),
    and per layout variant other than Mokry's (key suffixed with the variant)."""
    from .mokry_hash import PAPER_VARIANT, best_speedups

    recs: list[Record] = []
    for r in best_speedups(rows, variant=None).itertuples():
        suffix = "" if r.variant == PAPER_VARIANT else f",{r.variant}"
        recs += _ratios("mokry_hash", f"mib={r.table_mib},{r.mode},t={r.threads}{suffix}", {"speedup": r.speedup}, r)
    lookups = rows[rows["mode"].isin(["hit", "miss"])]
    for (mib, mode), g in lookups.groupby(["table_mib", "mode"]):
        recs.append(("mokry_hash", f"mib={mib},{mode}", "checksum", _distinct(g.checksum), "exact"))
    return recs


def mokry_lm(rows: pd.DataFrame) -> list[Record]:
    """`bench mokry_lm` rows. exact: our score checksum per model (the log10 sum in query order as a hex float;
    every sequential/automaton point must agree). ratio: best automaton speed-up over our sequential path,
    and our sequential path against the kenlm module; ours against KenLM's C++ probing model when measured."""
    from .mokry_lm import best_speedups

    recs: list[Record] = []
    ours = rows[rows.backend.isin(["sequential", "automaton"])]
    for model, g in ours.groupby("model"):
        recs.append(("mokry_lm", f"model={model}", "checksum", _distinct(g.checksum), "exact"))
    for r in best_speedups(rows).itertuples():
        pairs = {"speedup": r.speedup, "sequential_vs_kenlm": r.sequential_vs_kenlm}
        for col in ("sequential_vs_kenlm_probing_cpp", "automaton_vs_kenlm_probing_cpp"):
            if hasattr(r, col):
                pairs[col] = getattr(r, col)
        recs += _ratios("mokry_lm", f"model={r.model}", pairs, r)
    return recs


def glm_btree(rows: pd.DataFrame) -> list[Record]:
    """`bench glm_btree` rows. exact per model: the CPU B-tree score checksum (every node size, batch and thread
    count gives bit-identical scores) and the probing LM's. ratio per model: B-tree / probing throughput at
    one thread (also for the stream-reuse B-tree rows) and over KenLM's C++ trie when measured, and B-tree and probing throughput at the most
    threads measured over one thread (best of the repeats). GPU rows are left out."""
    from .glm_btree import per_point

    recs: list[Record] = []
    cpu = rows[(rows.sweep != "stats") & rows.backend.isin(["btree", "probing"])]
    for model, g in cpu.groupby("model"):
        for be in ("btree", "probing"):
            c = _distinct(g[g.backend == be].checksum)
            if c:
                recs.append(("glm_btree", f"model={model}", f"{be}_checksum", c, "exact"))
    from ..protocol import paired_ratios

    pts = per_point(rows)
    tab = pts[(pts.sweep == "table") & pts.backend.isin(["btree", "btree-reuse", "probing", "kenlm-trie-cpp"])]
    for model, g in tab.groupby("model"):
        m = rows[(rows.model == model) & (rows.sweep == "table")]
        th = m["threads"].fillna(-1).astype(int)

        def per_repeat(a: tuple[str, int], b: tuple[str, int]) -> list[float]:
            num, den = (m.backend == a[0]) & (th == a[1]), (m.backend == b[0]) & (th == b[1])
            if b[0] == "kenlm-trie-cpp":  # the live peer: rows of one run, clock, thread count (report.common)
                from .common import check_like
                from .glm_btree import VS_KENLM_TRIE
                check_like(VS_KENLM_TRIE, m[num], m[den], where=f"glm_btree metrics ({model})")
            return paired_ratios(m, num, den, value="qps", higher_is_better=True)
        qps = {(b, int(t)): float(q) for b, t, q in zip(g.backend, g.threads, g.qps_best)}
        tmax = max(t for _, t in qps)
        ratios: dict[str, object] = {}
        if ("btree", 1) in qps and ("probing", 1) in qps:
            ratios["btree_vs_probing"] = qps["btree", 1] / qps["probing", 1]
        if ("btree-reuse", 1) in qps and ("probing", 1) in qps:
            ratios["btree_reuse_vs_probing"] = qps["btree-reuse", 1] / qps["probing", 1]
        if ("btree", 1) in qps and ("kenlm-trie-cpp", 1) in qps:  # gLM's CPU peer, KenLM's own trie
            ratios["btree_vs_kenlm_trie_cpp"] = qps["btree", 1] / qps["kenlm-trie-cpp", 1]
        for be in ("btree", "probing"):
            if tmax > 1 and (be, 1) in qps and (be, tmax) in qps:
                ratios[f"{be}_thread_scaling"] = qps[be, tmax] / qps[be, 1]
        pairs = {"btree_vs_probing": (("btree", 1), ("probing", 1)),
                 "btree_reuse_vs_probing": (("btree-reuse", 1), ("probing", 1)),
                 "btree_vs_kenlm_trie_cpp": (("btree", 1), ("kenlm-trie-cpp", 1)),
                 "btree_thread_scaling": (("btree", tmax), ("btree", 1)),
                 "probing_thread_scaling": (("probing", tmax), ("probing", 1))}
        recs += _ratios("glm_btree", f"model={model}", ratios,
                        {k: per_repeat(*pairs[k]) for k in ratios if k in pairs})
    return recs


def mediani(rows: pd.DataFrame) -> list[Record]:
    """`bench mediani_scoring` rows. exact per corpus fraction: how many distinct phrase tables (MD5 of the bytes) our
    thread counts and the distributed form wrote: 1. The digest itself, the extract's line count and the pair
    count are NOT exact: the corpus is aligned by eflomal, which is unseeded, so the extract (and so the
    phrase table) changes from one fresh run to the next. ratio: our most-threads speed-up over one thread
    and over the sort pipeline per fraction (Table 3), and the distributed form's critical path against the
    sort pipeline (Table 4)."""
    from .mediani_scoring import table3, table4

    recs: list[Record] = []
    if "table_md5" in rows:
        for frac, g in rows[rows.system.isin(["ours", "distributed"])].groupby("fraction"):
            n = g.table_md5.dropna().nunique()
            if n:
                recs.append(("mediani_scoring", f"fraction={frac:g}", "distinct_tables", str(n), "exact"))
    from .mediani_scoring import moses_checks
    for r in moses_checks(rows).itertuples():
        for m in ("only_ours", "only_moses", "value_mismatches", "alignment_mismatches", "count_mismatches"):
            recs.append(("mediani_scoring", f"fraction={r.fraction:g}", f"moses_{m}", str(int(getattr(r, m))),
                         "exact"))
    for r in table3(rows).itertuples():
        recs += _ratios("mediani_scoring", f"fraction={r.fraction:g}",
                        {"thread_speedup": r.thread_speedup, "speedup_vs_sort": r.speedup_vs_sort,
                         "speedup_vs_moses": r.speedup_vs_moses, "speedup_vs_moses_1t": r.speedup_vs_moses_1t}, r)
    t4 = table4(rows)
    for r in t4.itertuples():
        recs += _ratios("mediani_scoring", f"distributed,k={int(r.partitions)}",
                        {"speedup_vs_sort": r.speedup_vs_sort}, r)
    return recs


def lm_models(table: pd.DataFrame) -> list[Record]:
    """`lm models-table` CSV. exact per model: training tokens and the n-gram count of every order (the
    estimator and the seeded sampler of the synthetic models are deterministic)."""
    recs: list[Record] = []
    for r in table.to_dict("records"):
        key = f"model={r['model']}"
        recs.append(("lm_models", key, "training_tokens", str(int(r["training_tokens"])), "exact"))
        for n in range(1, int(r["order"]) + 1):
            recs.append(("lm_models", key, f"ngrams_{n}", str(int(r[f"ngrams_{n}"])), "exact"))
    return recs


PPL_DIGITS = 6  # decimals of the held-out perplexity kept as an exact metric


def lm_estimator_parity(table: pd.DataFrame) -> list[Record]:
    """`lm estimate-parity` CSV. exact per order: our n-gram count, lmplz's, the n-grams only one side has,
    and our model's held-out perplexity (kenlm module) to PPL_DIGITS decimals. lmplz's perplexity is left out:
    lmplz is compiled on each machine from the sdist, so its last digits are not ours to pin."""
    recs: list[Record] = []
    for r in table.to_dict("records"):
        key = f"order={int(r['order'])}"
        for m in ("ngrams_ours", "ngrams_lmplz", "ngrams_only_one_side"):
            recs.append(("lm_estimator_parity", key, m, str(int(r[m])), "exact"))
        recs.append(("lm_estimator_parity", key, "ppl_ours", f"{float(r['ppl_ours']):.{PPL_DIGITS}f}", "exact"))
    return recs


def moses_decode(rows: pd.DataFrame) -> list[Record]:
    """`bench moses_decode` rows. exact: identical lines and scores >= Moses2's, n-best rescoring mismatches, BLEU (2
    decimals) and the digest of the 1-best output (the search is deterministic). No ratio: the Moses figures come
    from another run."""
    out: list[Record] = []
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
            t = kept(rows[(rows.kind == "peer_timing") & (rows.search == p.search)])  # retaken repeats left out
            from .common import check_like
            from .moses_decode import OURS_SPEEDUP
            if not check_like(OURS_SPEEDUP, t[t.system == "ours"], t[t.system == p.system], where=f"moses_decode {key}"):
                continue  # timed outside the run's repeats: no ratio
            ours = t[t.system == "ours"].set_index("repeat").words_per_second
            theirs = t[t.system == p.system].set_index("repeat").words_per_second
            r = (ours / theirs).dropna()
            if len(r):
                out.append(("moses_decode", key, "ours_speedup", f"{float(r.median()):.4f}", "ratio"))
    return out


def mokry_decoder(rows: pd.DataFrame) -> list[Record]:
    """`bench mokry_decoder` rows. exact: BLEU and the output digest per point (deterministic; every queue size equals
    lazy scoring, checked in the run); ratio: lazy/queue and off/queue time at the best queue size (one run)."""
    out: list[Record] = []
    for (lm, pt), g in rows.groupby(["lm", "point"]):
        q = g.iloc[0]
        key = f"{lm}-{pt}-p{int(q.pop_limit)}-n{int(q.sentences)}"
        out.append(("mokry_decoder", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
        out.append(("mokry_decoder", key, "output_sha", _distinct(g.output_sha), "exact"))
    for lm, g in rows.groupby("lm"):
        best = g.groupby(["point", "queue_size"], dropna=False)["decode_seconds"].min().reset_index()
        qbest = float(best[best.point == "queue"].decode_seconds.min())
        off = float(best[best.point == "off"].decode_seconds.iloc[0])
        lazy = float(best[best.point == "lazy"].decode_seconds.iloc[0])
        out += _ratios("mokry_decoder", str(lm), {"speedup_vs_lazy": lazy / qbest, "speedup_vs_off": off / qbest})
    return out


def moses2_search(rows: pd.DataFrame) -> list[Record]:
    """`bench moses2_search` rows. exact per point: BLEU, output digest, search errors (deterministic); ratio: each
    queue configuration's time over the cardinality queue's, and coverage-end stacks' over cardinality's at the
    largest pop limit (one run)."""
    out: list[Record] = []
    for (table, st, qu, pop), g in rows.groupby(["table", "stacks", "queues", "pop_limit"]):
        q = g.iloc[0]
        key = f"{table}-{st}-{qu}-p{int(pop)}-n{int(q.sentences)}"
        out.append(("moses2_search", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
        out.append(("moses2_search", key, "output_sha", _distinct(g.output_sha), "exact"))
        if "search_errors" in q and pd.notna(q.search_errors):
            out.append(("moses2_search", key, "search_errors", str(int(q.search_errors)), "exact"))
    qs = rows[rows.table == "queues"].groupby("queues")["decode_seconds"].min()
    if "cardinality" in qs:
        out += _ratios("moses2_search", "queues", {f"time_{k}_vs_cardinality": v / qs["cardinality"]
                                                   for k, v in qs.items() if k != "cardinality"})
    st = rows[rows.table == "stacks"]
    if len(st):
        top = st[st.pop_limit == st.pop_limit.max()].groupby("stacks")["decode_seconds"].min()
        if "cardinality" in top and "coverage-end" in top:
            out += _ratios("moses2_search", f"stacks-p{int(st.pop_limit.max())}",
                           {"time_coverage-end_vs_cardinality": top["coverage-end"] / top["cardinality"]})
    return out


def moses2_scaling(rows: pd.DataFrame) -> list[Record]:
    """`bench moses2_scaling` rows. exact: BLEU, output digest and oracle-identical count of the reference pass, and per
    timed point the count of sentences identical to it (every point must reproduce the reference: thread counts,
    pools, cache sizes, compression, reordering storage); cache hits per cache size (deterministic). ratio: 2/1
    threads of our configuration, pools on/off, integrated/separate reordering, plain/compressed (one run)."""
    out: list[Record] = []
    q = rows[rows.kind == "quality"].iloc[0]
    key = f"p{int(rows[rows.kind == 'timing'].pop_limit.iloc[0])}-n{int(q.sentences)}"
    out.append(("moses2_scaling", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
    out.append(("moses2_scaling", key, "output_sha", str(q.output_sha), "exact"))
    if not pd.isna(q.get("identical_to_oracle")):  # rows of the oracle's model (Moses2's recorded run) only
        out.append(("moses2_scaling", key, "identical_to_oracle", str(int(q.identical_to_oracle)), "exact"))
    t = rows[rows.kind == "timing"]
    for (table, cache, pool, th, sub), g in t.groupby(["table", "cache", "pool", "threads", "subset"]):
        k = f"{key}-{table}-c{int(cache)}-pool{pool}-t{int(th)}-{sub}"
        out.append(("moses2_scaling", k, "identical", _distinct(g.identical.astype(int)), "exact"))
        if table != "text":
            out.append(("moses2_scaling", k, "cache_hits", _distinct(g.cache_hits.astype(int)), "exact"))
    best = t.groupby(["table", "cache", "pool", "threads", "subset"]).decode_seconds.min()
    main = t[t.groups.str.contains("ours")].iloc[0]
    mt, mc = main.table, int(main.cache)

    def get(table, cache, pool, th, sub="all"):
        return best.get((table, cache, pool, th, sub))

    pairs = {}
    if get(mt, mc, "on", 1) and get(mt, mc, "on", 2):
        pairs["ours_2_over_1_threads"] = get(mt, mc, "on", 1) / get(mt, mc, "on", 2)
    if get(mt, mc, "off", 1) and get(mt, mc, "on", 1):
        pairs["pool_on_speedup_1thread"] = get(mt, mc, "off", 1) / get(mt, mc, "on", 1)
    if get("plain-sep", mc, "on", 1) and get("plain-int", mc, "on", 1):
        pairs["integrated_ro_speedup_1thread"] = get("plain-sep", mc, "on", 1) / get("plain-int", mc, "on", 1)
    if get("comp-int", mc, "on", 1) and get("plain-int", mc, "on", 1):
        pairs["plain_targets_speedup_1thread"] = get("comp-int", mc, "on", 1) / get("plain-int", mc, "on", 1)
    out += _ratios("moses2_scaling", key, pairs)
    return out


def moses2_moses1(rows: pd.DataFrame) -> list[Record]:
    """`bench moses2_moses1` rows (Moses v1). exact: the number of points of the grid (measured or not built: whether
    Moses v1 is built is the machine's business, not a regression), and per timed point the count of 1-best lines
    differing from the model's in-memory reference (Moses is deterministic; "new" where the baseline machine had no
    Moses v1). ratio: probing over in-memory phrase table, tree over in-memory reordering table, 2 over 1 threads."""
    from .moses2_moses1 import per_point
    out: list[Record] = []
    grid = rows.drop_duplicates(["model", "phrase_table", "reordering", "threads"])
    for m, g in grid.groupby("model"):
        out.append(("moses2_moses1", str(m), "points", str(len(g)), "exact"))
    for (m, pt, lr, th), g in rows.groupby(["model", "phrase_table", "reordering", "threads"]):
        k = f"{m}-pt{pt}-lr{lr}-t{int(th)}"
        if "lines_differing_from_reference" in g and g.lines_differing_from_reference.notna().any():
            out.append(("moses2_moses1", k, "lines_differing",
                        _distinct(g.lines_differing_from_reference.dropna().astype(int)), "exact"))
    pts = per_point(rows)
    best = {tuple(r[:4]): r[4] for r in pts[POINT_M1 + ["decode_min_s"]].itertuples(index=False)}
    for m in pts.model.unique() if len(pts) else []:
        pairs = {}
        for th in sorted(pts.threads.unique()):
            a, b = best.get((m, "memory", "memory", th)), best.get((m, "probing", "memory", th))
            if a and b:
                pairs[f"probing_pt_speedup_t{int(th)}"] = a / b
            a, b = best.get((m, "probing", "memory", th)), best.get((m, "probing", "tree", th))
            if a and b:
                pairs[f"tree_lr_speedup_t{int(th)}"] = a / b
        a, b = best.get((m, "probing", "tree", 1)), best.get((m, "probing", "tree", 2))
        if a and b:
            pairs["threads_2_over_1"] = a / b
        out += _ratios("moses2_moses1", str(m), pairs)
    return out


POINT_M1 = ["model", "phrase_table", "reordering", "threads"]


def moore_quirk(rows: pd.DataFrame, peers: bool = False) -> list[Record]:
    """`bench moore_quirk` rows. exact per variant and setting (the settings themselves are chosen on deterministic
    measures): BLEU, output digest, hypotheses evaluated (a count); ratio: Pharaoh's and DE's time over DE+EP's at
    the highest BLEU all variants reach, read on the upper hulls (one run); with ``peers`` (the Moses-mode
    configuration) each of our other searches' time over DE+EP's at that search's BLEU."""
    from .moore_quirk import moses_table, ratio_table
    out: list[Record] = []
    for (v, tt, bt, tl, bl), g in rows.groupby(["variant", "ttable_threshold", "beam_threshold", "ttable_limit",
                                                "beam_limit"]):
        q = g.iloc[0]
        key = f"{q['mode']}-{v}-tt{tt:g}-bt{bt:g}-tl{int(tl)}-bl{int(bl)}-n{int(q.sentences)}"
        out.append(("moore_quirk", key, "bleu", f"{float(q.bleu):.2f}", "exact"))
        out.append(("moore_quirk", key, "output_sha", _distinct(g.output_sha), "exact"))
        out.append(("moore_quirk", key, "hypotheses_evaluated", _distinct(g.hypotheses_evaluated.astype(int)),
                    "exact"))
    if peers:
        t = moses_table(rows)
        for _, r in t.iterrows():
            out += _ratios("moore_quirk", "moses-" + str(r.config).replace(" ", "_").replace(",", ""),
                           {"time_vs_de+ep_at_its_bleu": r["time_ratio_vs_de+ep"]})
        return out
    rt = ratio_table(rows)
    top = rt[rt.level == "highest"].set_index("variant")
    for v in ("pharaoh", "de"):
        if v in top.index:
            out += _ratios("moore_quirk", "highest-bleu", {f"time_{v}_vs_de+ep": top.loc[v, "time_ratio_vs_de+ep"]})
    return out


def tune(evals: pd.DataFrame, iters: pd.DataFrame, peers: pd.DataFrame | None) -> list[Record]:
    """Weight tuning. exact: dev/test BLEU (2 decimals) of each weights label (the decoders and the optimisers are
    deterministic given the seed), the iteration count and the iteration whose weights were returned, and our
    optimisers' n-best BLEU on the peers' lists (2 decimals). Moses' side is not a metric (another program)."""
    out: list[Record] = []
    for _, e in evals.iterrows():
        out.append(("tune", f"{e['label']}-{e['split']}", "bleu", f"{float(e['bleu']):.2f}", "exact"))
    for opt, g in (iters.groupby("optimizer") if len(iters) else []):
        out.append(("tune", opt, "iterations", str(int(g["run"].max())), "exact"))
        out.append(("tune", opt, "best_dev_run", str(int(g.loc[g["dev_bleu"].idxmax(), "run"])), "exact"))
    if peers is not None and len(peers) and "nbest_bleu" in peers:
        for _, r in peers[(peers.side == "ours") & peers.nbest_bleu.notna()].iterrows():
            out.append(("tune", f"peers-{r['optimizer']}", "nbest_bleu", f"{float(r['nbest_bleu']):.2f}", "exact"))
    return out
