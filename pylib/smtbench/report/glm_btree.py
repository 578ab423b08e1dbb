"""Bogoychev & Lopez 2016 (gLM) §5: Table 3 (throughput and size), the B-stump shares of §5.2, Table 4
(a ~5x larger model), Table 5 (orders 3-5), Fig 9 (throughput vs node size K) and Fig 10 (throughput vs
batch size), from `smtbench bench glm_btree` rows. Throughput = n-gram queries per second, the best (min time)
over repeats of one run; GPU columns say "no GPU lent" where the run had no GPU."""
from __future__ import annotations

import argparse

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..protocol import REGIME_COLUMNS, spell_counts
from .common import Ratio, add_interval, check_like, declare, move_last, paper_values, ratio_pairs
from . import metrics
from ..experiments.frame import Verb, arg, counts_arg

NO_GPU = "no GPU lent"
POINT = ["model", "sweep", "backend", "path", "node_size", "threads", "batch"]


def per_point(rows: pd.DataFrame) -> pd.DataFrame:
    """Best (max) and median throughput over repeats per measured point; unmeasured GPU points keep
    their reason in ``note``."""
    r = rows[rows["sweep"] != "stats"].copy()
    if "retaken" in r.columns:  # attempts a slow spell had retaken are kept in the rows, not counted
        r = r[r["retaken"].fillna(False).astype(bool) == False]  # noqa: E712
    for c in ("node_size", "threads", "batch"):
        r[c] = r[c].fillna(-1).astype(int)
    if "gpu" not in r:
        r["gpu"] = None
    g = r.groupby(POINT, dropna=False)
    out = g["qps"].agg(qps_best="max", qps_median="median", qps_worst="min", repeats="count").reset_index()
    facts = g[["model_bytes", "order", "ngrams", "synthetic", "queries", "gpu"]].first().reset_index()
    out = out.merge(facts, on=POINT)
    out["note"] = np.where(out["qps_best"].isna(), out["gpu"].fillna(NO_GPU), "")
    return out


def _threads(threads: int) -> str:
    return f"{threads} thread{'s' if threads > 1 else ''}"


def _label(backend: str, path: str, threads: int, cores: int) -> str:
    if backend == "probing":
        return f"probing LM ({_threads(threads)})"
    if backend == "btree":
        return f"B-tree CPU ({_threads(threads)})"
    if backend == "btree-reuse":
        return f"B-tree CPU, stream reuse ({_threads(threads)})"
    if backend == "btree-cuda":
        return "B-tree GPU (kernel)" if path == "gpu-kernel" else "B-tree GPU (with copies)"
    if backend in _KENLM_CPP:
        return f"{_KENLM_CPP[backend]} ({_threads(threads)})"
    return "kenlm module (1 thread)"


_KENLM_CPP = {"kenlm-probing-cpp": "KenLM probing, C++", "kenlm-trie-cpp": "KenLM trie, C++"}


# which published row each of ours is shown beside (the nearest analogue; the paper has no CPU B-tree)
_PAPER_ROW = {"probing-1": "KenLM probing (1)", "probing-n": "KenLM probing (16)", "btree-1": "KenLM trie (1)",
              "gpu-kernel": "gLM", "kenlm-module": "KenLM probing (1)", "kenlm-probing-cpp": "KenLM probing (1)",
              "kenlm-trie-cpp": "KenLM trie (1)"}


def _paper_key(backend: str, path: str, threads: int) -> str:
    """Key into _PAPER_ROW for one of our Table 3 systems ("" = no published analogue)."""
    if backend == "probing":
        return "probing-1" if threads == 1 else "probing-n"
    if backend == "btree":
        return "btree-1" if threads == 1 else ""
    if backend == "btree-cuda":
        return path
    if backend == "kenlm-probing-cpp" and threads > 1:
        return "probing-n"
    if backend in ("kenlm-module", "kenlm-probing-cpp", "kenlm-trie-cpp"):
        return backend if threads <= 1 else ""
    return ""  # e.g. btree-reuse (stream reuse): ours, not the paper's


def _main_model(rows: pd.DataFrame) -> str:
    nb = rows[rows["sweep"].isin(["node_size", "batch"])]
    return str((nb if not nb.empty else rows)["model"].iloc[0])


# Table 3's ratios (report.common.declare): every row's throughput over our one-thread probing LM (ours against ours:
# for a multi-thread row a thread-scaling ratio, so threads may differ), and over each of KenLM's programs (the trie:
# gLM's CPU peer; probing) at the row's own thread count: kenlm_benchmark -t T in the same run. A row whose thread
# count the peer was not timed at (rows of runs before issue 40 timed it at 1 thread only) carries no ratio to it.
VS_PROBING_1 = Ratio("vs_probing_1", num="the row's system", den="our probing LM, 1 thread", same=("run_id", "clock"))
VS_KENLM_TRIE = Ratio("vs_kenlm_trie_cpp", num="the row's system",
                      den="KenLM's trie, kenlm_benchmark -t T (the row's thread count)")
VS_KENLM_PROBING = Ratio("vs_kenlm_probing_cpp", num="the row's system",
                         den="KenLM's probing model, kenlm_benchmark -t T (the row's thread count)")
# the GPU rows (no CPU thread count) against the trie: gLM's own comparison, a device against KenLM's one thread
VS_KENLM_TRIE_GPU = Ratio("vs_kenlm_trie_cpp", num="the B-tree on the GPU", den="KenLM's trie, kenlm_benchmark -t 1",
                          same=("run_id", "clock"))
VS_KENLM_PROBING_GPU = Ratio("vs_kenlm_probing_cpp", num="the B-tree on the GPU",
                             den="KenLM's probing model, kenlm_benchmark -t 1", same=("run_id", "clock"))
declare("glm_table3", VS_PROBING_1, VS_KENLM_TRIE, VS_KENLM_PROBING, VS_KENLM_TRIE_GPU, VS_KENLM_PROBING_GPU)
#: the peers of Table 3's ratios: (backend, the ratio on CPU rows, on GPU rows)
_PEER_RATIOS = (("kenlm-trie-cpp", VS_KENLM_TRIE, VS_KENLM_TRIE_GPU),
                ("kenlm-probing-cpp", VS_KENLM_PROBING, VS_KENLM_PROBING_GPU))
# Table 4's one ratio is of sizes, not times: n-grams of the big model over the regular one's (no run to share)
declare("glm_table4", Ratio("size_ratio_ngrams", num="the big model's n-grams", den="the regular model's", same=()))


#: Table 3's fixed count points (smtbench.counts): the B-tree (node size 31, the library's default interleave,
#: independent queries, one thread) and KenLM's trie under kenlm_benchmark, on the Moses oracle's English 5-gram
#: and its dev.en queries
COUNT_POINTS = {"B-tree CPU (1 thread)": ("btree-o5-k31", "kenlm-trie-o5")}


def with_counts(table: pd.DataFrame, counts_csv: str | None) -> pd.DataFrame:
    """Table 3 with the count columns beside the ratio to KenLM's trie (:func:`common.with_counts`)."""
    from .common import with_counts as _with_counts

    return _with_counts(table, counts_csv, lambda r: COUNT_POINTS.get(r["system"]), after="vs_kenlm_trie_cpp_ci_high")


def table3(rows: pd.DataFrame, model: str | None = None) -> pd.DataFrame:
    """Throughput and size of each system on one model (the shipped-corpus 5-gram)."""
    model = model or _main_model(rows)
    pts = per_point(rows)
    p = pts[(pts.model == model) & (pts.sweep == "table")].copy()
    if p.empty:
        raise ValueError(f"no Table 3 rows for model {model!r}")
    cores = int(rows["machine_cores"].iloc[0]) if "machine_cores" in rows else 1
    p = p.sort_values(["backend", "path", "threads"])
    out = pd.DataFrame({
        "system": [_label(b, pa, t, cores) for b, pa, t in zip(p.backend, p.path, p.threads)],
        "threads": p.threads.where(p.threads > 0).astype("Int64").values,
        "qps": p.qps_best.values,
        "qps_median": p.qps_median.values,
        "model_mb": (p.model_bytes / 1e6).values,
        "note": p.note.values,
    })
    base = p[(p.backend == "probing") & (p.threads == 1)].qps_best
    out["vs_probing_1"] = out["qps"] / float(base.iloc[0]) if len(base) else np.nan
    # the GPU rows (threads -1) compare with KenLM's one thread; every CPU row with KenLM at its own thread count
    peer_threads = [1 if t < 0 else int(t) for t in p.threads]
    for backend, ratio, _ in _PEER_RATIOS:  # KenLM's trie (gLM's CPU peer) and probing programs
        qps = {int(t): float(q) for t, q in zip(p[p.backend == backend].threads, p[p.backend == backend].qps_best)}
        out[ratio.name] = [q / qps[t] if t in qps else np.nan for q, t in zip(out["qps"], peer_threads)]
    out.loc[out.system.str.startswith("kenlm"), "model_mb"] = np.nan
    out["paper_row"] = [_PAPER_ROW.get(_paper_key(b, pa, t), "") for b, pa, t in zip(p.backend, p.path, p.threads)]
    paper = paper_values("glm2016", "table3").rename(columns={"key": "paper_row"})
    out = out.merge(paper[["paper_row", "paper_qps", "paper_size_gb", "paper_citation"]], on="paper_row",
                    how="left")
    out["qps"] = [NO_GPU if pd.isna(v) else int(round(v)) for v in out["qps"]]
    out["model"] = model
    # intervals of both ratio columns over the run's paired repeats (throughput of the row's point / the base's)
    m = rows[(rows["model"] == model) & (rows["sweep"] == "table")].copy()
    m["threads"] = m["threads"].fillna(-1).astype(int)
    sel = [(m["backend"] == b) & (m["path"] == pa) & (m["threads"] == t) for b, pa, t in zip(p.backend, p.path, p.threads)]
    probing_1 = (m["backend"] == "probing") & (m["threads"] == 1)
    for ratio, gpu_ratio, base_of in (
            (VS_PROBING_1, VS_PROBING_1, lambda t: probing_1),
            *((r, g, (lambda backend: lambda t: (m["backend"] == backend) & (m["threads"] == t))(b))
              for b, r, g in _PEER_RATIOS)):
        # every row's ratio only where its rows and the base's are of one run, clock and (where declared) thread
        # count (report.common.check_like: refused otherwise; None: no ratio by design or no peer row at the row's
        # thread count, the cell left empty)
        per = [ratio_pairs(gpu_ratio if b == "btree-cuda" else ratio, m, s_, base_of(t), value="qps",
                           higher_is_better=True, where=f"glm_table3 ({model}), {label}")
               for s_, label, b, t in zip(sel, out["system"], p.backend, peer_threads)]
        out[ratio.name] = [v if r is not None else np.nan for v, r in zip(out[ratio.name], per)]
        out = add_interval(out, ratio.name, [r or [] for r in per])
    spells = spell_counts(m)
    out["retaken_repeats"], out["spell_probe_ns"] = spells["retaken"], spells["probe_ns"]
    for k in REGIME_COLUMNS:  # rows with a working-set probe (smtbench.protocol, machine regime)
        if k in spells:
            out[k] = spells[k]
    out = move_last(out, ["n_repeats", "retaken_repeats", "spell_probe_ns", *REGIME_COLUMNS])
    return out




def bstumps(rows: pd.DataFrame, model: str | None = None, node_size: int = 31) -> pd.DataFrame:
    """Share of trie nodes whose B-tree is a single node (a B-stump), per order (§5.2)."""
    model = model or _main_model(rows)
    st = rows[(rows.sweep == "stats") & (rows.model == model)]
    if node_size not in set(st.node_size):
        node_size = int(st.node_size.iloc[0])
    st = st[st.node_size == node_size]
    out = st[["ngram_order", "entries", "trie_nodes", "b_stumps", "b_stump_share", "max_btree_depth"]].copy()
    out.insert(0, "node_size", node_size)
    out["key"] = "order=" + out.ngram_order.astype(int).astype(str)
    paper = paper_values("glm2016", "bstumps")
    out = out.merge(paper[["key", "paper_b_stump_share", "paper_citation"]], on="key", how="left")
    return out.drop(columns="key")


def _system_qps(pts: pd.DataFrame, model: str) -> dict[str, object]:
    p = pts[(pts.model == model) & (pts.sweep == "table")]

    def pick(mask) -> object:
        s = p[mask]
        if s.empty:
            return np.nan
        v = s.qps_best.iloc[0]
        if pd.isna(v):
            return NO_GPU if s.backend.iloc[0] == "btree-cuda" else np.nan
        return int(round(v))

    return {"probing LM (1 thread)": pick((p.backend == "probing") & (p.threads == 1)),
            "B-tree CPU (1 thread)": pick((p.backend == "btree") & (p.threads == 1)),
            "B-tree CPU, stream reuse (1 thread)": pick((p.backend == "btree-reuse") & (p.threads == 1)),
            "B-tree GPU (kernel)": pick((p.backend == "btree-cuda") & (p.path == "gpu-kernel")),
            "KenLM probing, C++ (1 thread)": pick((p.backend == "kenlm-probing-cpp") & (p.threads == 1)),
            "KenLM trie, C++ (1 thread)": pick((p.backend == "kenlm-trie-cpp") & (p.threads == 1)),
            "kenlm module (1 thread)": pick(p.backend == "kenlm-module")}


_PAPER_SYS = {"probing LM (1 thread)": "KenLM", "kenlm module (1 thread)": "KenLM",
              "KenLM probing, C++ (1 thread)": "KenLM", "KenLM trie, C++ (1 thread)": "KenLM Trie",
              "B-tree CPU (1 thread)": "KenLM Trie", "B-tree GPU (kernel)": "gLM"}


def table4(rows: pd.DataFrame, regular: str, big: str) -> pd.DataFrame:
    """Throughput on the regular and the ~5x larger model, and the slowdown."""
    pts = per_point(rows)
    a, b = _system_qps(pts, regular), _system_qps(pts, big)
    ng = pts.groupby("model")["ngrams"].first()
    out = pd.DataFrame({"system": list(a), "qps_regular": list(a.values()), "qps_big": list(b.values())})
    num = pd.to_numeric(out.qps_regular, errors="coerce"), pd.to_numeric(out.qps_big, errors="coerce")
    out["slowdown_pct"] = 100 * (1 - num[1] / num[0])
    out["regular_model"], out["big_model"] = regular, big
    out["size_ratio_ngrams"] = float(ng.get(big, np.nan)) / float(ng.get(regular, np.nan))
    paper = paper_values("glm2016", "table4")
    out["paper_row"] = out.system.map(_PAPER_SYS)
    out = out.merge(paper.rename(columns={"key": "paper_row"}), on="paper_row", how="left")
    return out


def table5(rows: pd.DataFrame, models_by_order: dict[int, str]) -> pd.DataFrame:
    """Throughput per system for the models of orders 5, 4, 3."""
    pts = per_point(rows)
    cols = {}
    for n in sorted(models_by_order, reverse=True):
        cols[f"qps_o{n}"] = _system_qps(pts, models_by_order[n])
    out = pd.DataFrame(cols)
    out.index.name = "system"
    out = out.reset_index()
    out["paper_row"] = out.system.map(_PAPER_SYS)
    paper = paper_values("glm2016", "table5")
    out = out.merge(paper.rename(columns={"key": "paper_row"}), on="paper_row", how="left")
    out["models"] = ", ".join(f"{n}: {m}" for n, m in sorted(models_by_order.items()))
    return out


def _kenlm_lines(ax, pts: pd.DataFrame, model: str) -> None:
    """KenLM's own C++ programs on the same model and queries (kenlm_benchmark -t 1, best of repeats: the figures'
    B-tree runs one thread), as horizontal lines (their throughput does not depend on K or on our batch size)."""
    for backend, style in (("kenlm-trie-cpp", "--"), ("kenlm-probing-cpp", ":")):
        k = pts[(pts.model == model) & (pts.backend == backend) & (pts.threads == 1)].qps_best.dropna()
        if len(k):
            ax.axhline(float(k.max()) / 1e6, color="black", lw=1.0, ls=style, label=f"{_KENLM_CPP[backend]} (1 thread)")


def fig9(rows: pd.DataFrame, model: str | None = None):
    """Throughput against B-tree node size K, CPU (1 thread) and GPU when measured."""
    model = model or _main_model(rows)
    pts = per_point(rows)
    p = pts[(pts.model == model) & (pts.sweep == "node_size")]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    cpu = p[p.backend == "btree"].sort_values("node_size")
    ax.plot(cpu.node_size, cpu.qps_best / 1e6, marker="o", label="B-tree CPU, 1 thread")
    ax.fill_between(cpu.node_size, cpu.qps_worst / 1e6, cpu.qps_best / 1e6, alpha=0.2, lw=0,
                    label="spread of the repeats (worst-best)")
    gpu_notes = []
    for path, style in (("gpu-kernel", "s-"), ("gpu-with-copies", "^--")):
        g = p[(p.backend == "btree-cuda") & (p.path == path)].sort_values("node_size")
        if g.qps_best.notna().any():
            ax.plot(g.node_size, g.qps_best / 1e6, style, label=f"B-tree GPU ({path.removeprefix('gpu-')})")
        elif not g.empty:
            gpu_notes.append(g.note.iloc[0])
    if gpu_notes:
        ax.text(0.98, 0.02, f"GPU: {NO_GPU}", transform=ax.transAxes, fontsize=8, color="gray", ha="right")
    _kenlm_lines(ax, pts, model)
    ax.axvline(32, color="gray", lw=0.6, ls=":")
    ax.set_xlabel("B-tree node size K")
    ax.set_ylabel("million n-gram queries per second (best of repeats)")
    ax.set_title(f"gLM Fig 9: throughput vs node size ({model})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def fig10(rows: pd.DataFrame, model: str | None = None):
    """Throughput against batch size: CPU B-tree, GPU kernel only and with host<->device copies."""
    model = model or _main_model(rows)
    pts = per_point(rows)
    p = pts[(pts.model == model) & (pts.sweep == "batch")]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    cpu = p[p.backend == "btree"].sort_values("batch")
    ax.plot(cpu.batch, cpu.qps_best / 1e6, marker="o", label="B-tree CPU, 1 thread (a C call per batch)")
    ax.fill_between(cpu.batch, cpu.qps_worst / 1e6, cpu.qps_best / 1e6, alpha=0.2, lw=0,
                    label="spread of the repeats (worst-best)")
    missing = False
    for path, style in (("gpu-kernel", "s-"), ("gpu-with-copies", "^--")):
        g = p[(p.backend == "btree-cuda") & (p.path == path)].sort_values("batch")
        if g.qps_best.notna().any():
            ax.plot(g.batch, g.qps_best / 1e6, style, label=f"B-tree GPU ({path.removeprefix('gpu-')})")
        elif not g.empty:
            missing = True
    if missing:
        ax.text(0.98, 0.02, f"GPU (with and without copies): {NO_GPU}", transform=ax.transAxes, fontsize=8, ha="right",
                color="gray")
    _kenlm_lines(ax, pts, model)
    ax.set_xscale("log")
    ax.set_xlabel("batch size (queries per call)")
    ax.set_ylabel("million n-gram queries per second (best of repeats)")
    ax.set_title(f"gLM Fig 10: throughput vs batch size ({model})")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig


# -------------------------------------------------- the regression metrics (smtbench.report.metrics writes them)

def regression_metrics(rows: pd.DataFrame) -> list[metrics.Record]:
    """`bench glm_btree` rows. exact per model: the CPU B-tree score checksum (every node size, batch and thread
    count gives bit-identical scores) and the probing LM's. ratio per model: B-tree / probing throughput at
    one thread (also for the stream-reuse B-tree rows) and over KenLM's C++ trie when measured, and B-tree and probing throughput at the most
    threads measured over one thread (best of the repeats). GPU rows are left out."""
    recs: list[metrics.Record] = []
    cpu = rows[(rows.sweep != "stats") & rows.backend.isin(["btree", "probing"])]
    for model, g in cpu.groupby("model"):
        for be in ("btree", "probing"):
            c = metrics.distinct(g[g.backend == be].checksum)
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
        recs += metrics.ratios("glm_btree", f"model={model}", ratios,
                               {k: per_repeat(*pairs[k]) for k in ratios if k in pairs})
    return recs


# ------------------------------------------------------------------------------------ the lent device's rows (issue 43)

NOT_LENT = "not lent"
#: the device table's ratio: every point over the device's own CPU B-tree at one thread, in the same device run
#: (the GPU has no CPU thread count, so threads are not compared; the run and the clock are)
VS_DEVICE_CPU_1 = Ratio("vs_device_cpu_1", num="the B-tree on the device (its GPU, or its CPU at every core)",
                        den="the same B-tree on the device's CPU at 1 thread, same device run",
                        same=("run_id", "clock"))
declare("glm_device", VS_DEVICE_CPU_1)
DEVICE_NOTES = ("The rows only a lent device machine gives (issue 43; `tools/device-rows.sh`, CONTRIBUTING.md "
                "'Device rows'): gLM's B-tree (K as named) on the Moses oracle's 5-gram LM (lm-en5, another model than "
                "Table 3's bible.o5) and the n-gram queries of its English dev verses (each word and </s> with its "
                "context back to <s>) tiled to the run's query count, built and queried by tools/device/device_rows.c "
                "over csrc/ (the CPU batch: SB_BTREE_DEFAULT_INTERLEAVE queries in flight a thread, csrc/lm/btree.h; "
                "the GPU: csrc/cuda/btree.cu, one batch of every query, CUDA "
                "events around the kernel alone and around the copies and the kernel). The GPU's answers equal the "
                "CPU's bit for bit and the CPU's log10 sum is checked against smtbench.lm.btree here (the run stops "
                "otherwise). qps: best of the repeats (median beside it); vs_device_cpu_1: over the device's CPU "
                "B-tree at 1 thread in the same device run (declared: smtbench.report.glm_btree). No KenLM row: its "
                "programs are not carried to the device. 'not lent': no device run is committed "
                "(results/raw/glm_btree/device.jsonl): no session has been lent a device machine yet.")


def device_table(rows: pd.DataFrame | None) -> pd.DataFrame:
    """The lent device's gLM rows: its CPU B-tree at 1 thread and at every core, the GPU kernel alone and with its
    copies; without rows (``None``) every row says 'not lent'."""
    from ..protocol import kept

    labels = ["B-tree CPU (1 thread)", "B-tree CPU (all cores)", "B-tree GPU (kernel)", "B-tree GPU (with copies)"]
    paper = paper_values("glm2016", "table3").rename(columns={"key": "paper_row"})
    if rows is None:
        out = pd.DataFrame({"system": labels, "qps": NOT_LENT, "device": NOT_LENT})
        out["paper_row"] = out.system.map({"B-tree GPU (kernel)": "gLM"})
        return out.merge(paper, on="paper_row", how="left")
    pts = rows[rows["kind"] == "glm_point"].copy()
    pts["threads"] = pts["threads"].astype("Int64") if "threads" in pts else pd.NA
    model = rows[rows["kind"] == "glm_model"].iloc[0]
    gpu = rows[rows["kind"] == "glm_gpu"]
    gpu_name = (gpu["gpu"].dropna().iloc[0] if "gpu" in gpu and gpu["gpu"].notna().any()
                else f"no GPU: {gpu['reason'].dropna().iloc[0]}" if "reason" in gpu and gpu["reason"].notna().any()
                else "no GPU")
    cores = int(pts.loc[pts["path"] == "cpu", "threads"].max())
    masks = [(pts["path"] == "cpu") & (pts["threads"] == 1), (pts["path"] == "cpu") & (pts["threads"] == cores),
             pts["path"] == "gpu-kernel", pts["path"] == "gpu-with-copies"]
    den = masks[0]
    recs, per = [], []
    for label, m in zip(labels, masks):
        k = kept(pts[m])
        if k.empty:
            recs.append({"system": label, "threads": cores if "all" in label else None, "qps": gpu_name})
            per.append([])
            continue
        best, base = float(k["qps"].max()), float(kept(pts[den])["qps"].max())
        recs.append({"system": label, "threads": int(k["threads"].iloc[0]) if "CPU" in label else None,
                     "qps": int(round(best)), "qps_median": float(k["qps"].median()),
                     "vs_device_cpu_1": round(best / base, 4)})
        per.append(ratio_pairs(VS_DEVICE_CPU_1, pts, m, den, value="qps", higher_is_better=True,
                               where=f"glm_device {label}") or [])
    out = add_interval(pd.DataFrame(recs), "vs_device_cpu_1", per)
    out["threads"] = out["threads"].astype("Int64")
    out["model_mb"] = round(float(model["model_bytes"]) / 2**20, 2)
    out["node_size"], out["queries"] = int(model["node_size"]), int(model["queries"])
    out["device"] = gpu_name
    out["cpu"] = f"{rows['cpu_model'].iloc[0]} ({int(rows['cores'].iloc[0])} cores)"
    out["device_run"] = rows["device_run"].iloc[0]
    out["paper_row"] = out.system.map({"B-tree GPU (kernel)": "gLM"})
    return out.merge(paper, on="paper_row", how="left")


# ----------------------------------------------------------------------------------------------- the report verb

#: `smtbench report glm_btree`, declared once (experiments/frame.py; built by commands/report_experiments.py)
VERBS = (
    Verb("glm_btree", ("glm",),
         help="gLM Tables 3-5, B-stump shares, Figs 9-10 from btree rows",
         settings=(
             arg("--rows", nargs="+", required=True, help="JSON-lines rows of `smtbench bench glm_btree`"),
             arg("--model", help="the Table 3 / Fig 9 / Fig 10 model (default: the one with sweeps)"),
             arg("--big-model", help="Table 4: the ~5x larger model"),
             arg("--order-models", default="", help="Table 5: e.g. 3=bible.o3,4=bible.o4,5=bible.o5"),
             arg("--node-size", type=int, default=31, help="K of the B-stump table"),
             arg("--tables", required=True, help="output directory for glm_*.csv/.md"),
             arg("--figures", required=True, help="output directory for glm_fig9.png, glm_fig10.png"),
             arg("--metrics", help="output CSV of regression metrics "
                                    "(smtbench.report.glm_btree.regression_metrics)"),
             counts_arg(),
             arg("--device-rows", default=None,
                 help="the lent device's gLM rows (results/raw/glm_btree/device.jsonl, from tools/device-rows.sh "
                      "--import): the glm_device table; without it that table says 'not lent'"),
         )),
)


NOTES = ("Ours: n-gram queries of the test text (each word and </s> with its context back to <s>), ids "
         "pre-converted, the text repeated to the run's query count; throughput = queries / time, best of the "
         "repeats (median beside it). B-tree CPU: csrc/lm/btree.c, K-ary SIMD search, interleaved batch "
         "(`interleave` queries in flight a thread, in each row); probing LM: "
         "our KenLM-style probing hash, sequential path with KenLM state over the token stream (threads: Python "
         "threads over sentence-aligned chunks, the GIL released in C); kenlm module: Model.score per sentence "
         "(includes a Python call per sentence and string handling). B-tree CPU, stream reuse: the same batch, "
         "but a query that continues the previous one takes its back-offs from that query's longest-match walk "
         "instead of a second walk (KenLM's state rebuilt from the batch; gLM answers queries independently, "
         "so this is ours, not the paper's). Every B-tree point gives bit-identical "
         "scores, equal to the probing LM's per query within 1e-5 and to kenlm's total (checked in the run). "
         "GPU columns: '" + "no GPU lent" + "' where the run had no GPU (nothing is invented). paper_*: the "
         "published row named in paper_row (the paper has no CPU B-tree; KenLM trie is its nearest analogue). "
         "Ratios (declared: smtbench.report.glm_btree): vs_probing_1 over our 1-thread probing LM of the same run "
         "(a thread-scaling ratio for the multi-thread rows); vs_kenlm_trie_cpp and vs_kenlm_probing_cpp over "
         "KenLM's trie and probing programs at the row's own thread count (kenlm_benchmark -t T in the same run's "
         "repeats; the GPU rows over -t 1, gLM's comparison): a row whose thread count the peer was not timed at "
         "(runs before issue 40 timed KenLM at 1 thread only), or a row timed outside the run's repeats (no run "
         "id: the kenlm module), carries none. KenLM's rows at T threads: T workers fed by its reader thread (T + 1 "
         "threads on the machine's cores). How KenLM's programs run (lm/kenlm_benchmark_main.cc): the usage's "
         "fastest way (ids converted offline by -v, ids and model read into the page cache before each run); the "
         "program always loads with util::READ (no -l option: read() into 2 MiB-aligned memory given "
         "madvise(MADV_HUGEPAGE), or a hugetlb pool where a sysadmin made one), so no lazily mapped file faults "
         "inside its timed part. Its time varies more than ours across repeats (the spread sentence below, from "
         "the rows): its CPU time follows its wall time (the worker itself runs slower; it does not wait for a "
         "core), and a check on this machine found its model on transparent huge pages in every process (rows "
         "record `peer_minor_faults`: all at load, about one per 2 MiB on huge pages, one per 4 KiB without), so "
         "neither faults nor its load method explain it; each repeat is a fresh process in fresh memory while ours "
         "keeps one allocation for the whole run, so KenLM's repeats sample the machine's memory placement (this "
         "VM's backing of its huge pages) where ours sees one: compare the paired estimate and its interval, not "
         "the best times.")


def spread_note(rows: pd.DataFrame, model: str) -> str:
    """One sentence from the rows: the range of the 1-thread KenLM trie's and B-tree's times over the kept repeats
    of Table 3, KenLM's CPU time over its wall time, and its processes' minor faults where recorded ("" without
    the trie's rows)."""
    from ..protocol import kept

    m = kept(rows[(rows["model"] == model) & (rows["sweep"] == "table")])
    th = m["threads"].fillna(-1).astype(int)
    trie, ours = m[(m["backend"] == "kenlm-trie-cpp") & (th == 1)], m[(m["backend"] == "btree") & (th == 1)]
    if trie.empty or ours.empty:
        return ""

    def ms(r: pd.DataFrame) -> str:
        v = r["elapsed_ns"].dropna() / 1e6
        return f"{v.min():.0f}-{v.max():.0f} ms over {len(v)} repeats"

    out = f"Spread in this run (1 thread, kept repeats): KenLM's trie {ms(trie)}, the B-tree {ms(ours)}"
    if "cpu_qps" in trie and trie["cpu_qps"].notna().any():
        out += f"; KenLM's CPU / wall time median {float((trie['qps'] / trie['cpu_qps']).median()):.2f}"
    if "peer_minor_faults" in trie and trie["peer_minor_faults"].notna().any():
        out += f"; its minor faults per process median {float(trie['peer_minor_faults'].median()):.0f}"
    return out + "."


def main(args: argparse.Namespace) -> int:
    from pathlib import Path
    from .common import check_counts, COUNT_NOTE, INTERVAL_NOTE, read_rows, save_figure, write_table

    rows = read_rows(args.rows, "glm_btree")
    device = read_rows([args.device_rows], "glm_btree") if args.device_rows else None  # checked before any output
    check_counts(args.counts)  # a bad --counts stops here, before any output (or folder) is made
    tables, figures = Path(args.tables), Path(args.figures)
    tables.mkdir(parents=True, exist_ok=True)
    figures.mkdir(parents=True, exist_ok=True)
    model = args.model or _main_model(rows)
    write_table(with_counts(table3(rows, model), args.counts), tables / "glm_table3",
                f"gLM Table 3: throughput (n-gram queries/s) and size on {model}",
                notes=" ".join(n for n in (NOTES, spread_note(rows, model), INTERVAL_NOTE,
                                           COUNT_NOTE if args.counts else "") if n))
    write_table(bstumps(rows, model, args.node_size), tables / "glm_bstumps",
                f"gLM §5.2: B-stump share of trie nodes per order ({model})", notes=NOTES)
    if args.big_model:
        write_table(table4(rows, model, args.big_model), tables / "glm_table4",
                    f"gLM Table 4: throughput on {model} and the larger {args.big_model}", notes=NOTES)
    if args.order_models:
        by_order = {int(k): v for k, v in (part.split("=", 1) for part in args.order_models.split(",") if part)}
        write_table(table5(rows, by_order), tables / "glm_table5",
                    "gLM Table 5: throughput by n-gram order", notes=NOTES)
    write_table(device_table(device),
                tables / "glm_device", "gLM Table 3's rows on a lent device: GPU kernel and with copies, beside the "
                "device's CPU", notes=DEVICE_NOTES + (" " + INTERVAL_NOTE if args.device_rows else ""))
    save_figure(fig9(rows, model), figures / "glm_fig9.png")
    save_figure(fig10(rows, model), figures / "glm_fig10.png")
    if args.metrics:
        metrics.write(regression_metrics(rows), args.metrics)
    return 0
