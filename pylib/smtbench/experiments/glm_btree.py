"""`smtbench bench glm_btree` (old name: `bench btree`): gLM's B-tree trie LM (Bogoychev & Lopez 2016, §5) against our
probing LM, KenLM's C++ models and the kenlm module — Table 3 (throughput and size, 1 and all threads), Fig 9
(node size K), Fig 10 (batch size, GPU with and without copies), and the rows Tables 4 and 5 read.

One model per run. The queries are the n-gram queries of a tokenized text (each word and </s> with its
context back to <s>), tiled to at least --min-queries; repeats are interleaved across points. Every B-tree
point must give bit-identical scores (checksum), equal to the probing LM's per-query scores within 1e-5,
and the kenlm module's total within float rounding — otherwise the run fails. A GPU point is measured only
when `smtbench.lm.cuda.available()`; otherwise one row per GPU point says why (no GPU lent)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from ..benchutil import parse_int_list
from .harness import Protocol, must_agree

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `glm_btree` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("glm_btree", ("btree",),
         help="gLM B-tree trie LM: throughput vs probing LM / kenlm, node size, batch size (gLM §5)",
         settings=(
             arg("--arpa", required=True, help="ARPA model (plain, .gz or .xz)"),
             arg("--text", required=True, config=True, help="tokenized text whose n-grams are the queries"),
             arg("--name", help="model name in the rows (default: from the file name)"),
             arg("--node-size", type=int, default=31, config=True, help="K for the table and batch sweeps (paper: 31)"),
             arg("--node-sizes", default="", config=True, grid=True,
                 help="Fig 9 sweep, e.g. 5,7,15,23,31,33,47,59 (empty = none)"),
             arg("--batch-sizes", default="", config=True, grid=True,
                 help="Fig 10 sweep, e.g. 10,100,1000,10000,100000,1000000"),
             arg("--threads", default="1", config=True, grid=True,
                 help="Table 3 thread counts, e.g. 1,2 (0 = all cores)"),
             arg("--interleave", type=int, default=16, config=True,
                 help="queries in flight per thread (0/1 = none; 16 = SB_BTREE_DEFAULT_INTERLEAVE)"),
             protocol(repeats=3),
             arg("--min-queries", type=int, default=1_000_000, config=True, help="tile the text to at least this many"),
             arg("--max-lines", type=int, default=0, help="use only the first lines of the text (0 = all)"),
             arg("--no-probing", action="store_true", help="skip our probing LM rows"),
             arg("--no-stream-reuse", action="store_true",
                 help="skip the B-tree rows with stream reuse (back-offs from the previous row's walk)"),
             arg("--no-kenlm", action="store_true", help="skip the kenlm module rows"),
             arg("--kenlm-binary", action="append", default=[], metavar="KIND=PATH",
                 help="KenLM's own model of the same ARPA (build_binary probing|trie), timed by kenlm_benchmark "
                      "-q -t T at each of --threads in every repeat beside ours (repeatable)"),
             arg("--no-gpu", action="store_true", help="do not try the GPU even when one is there"),
             arg("--out", help="write rows here (atomically) instead of stdout"),
             arg("--progress", action="store_true"),
             key("model", help="Table 3, Fig 9, Fig 10: a name in lm_models (its ARPA is --arpa)"),
             key("big_model", "", help="Table 4: a model ~5x larger (synthetic); empty: no Table 4"),
             key("order_models", [], grid=True, help="Table 5: one model per order; empty: no Table 5"),
             key("gpu_node_sizes", type=int, grid=True, help="Fig 9 on the GPU (--node-sizes of the GPU run)"),
             key("kenlm_cpp", True, type=bool,
                 help="add KenLM's C++ probing and trie rows (--kenlm-binary: build_binary + kenlm_benchmark -t T "
                      "at each thread count of the table)"),
         )),
)


INCLUDES_CPU = "ids pre-converted to query rows; batch query in C (one call per batch); no string handling"
INCLUDES_REUSE = (INCLUDES_CPU + "; stream reuse: a row that continues the previous row takes its back-offs "
                  "from that row's walk (KenLM's state rebuilt from the batch; not gLM's independent queries)")
INCLUDES_PROBING = "our probing LM, sequential path over the token stream (KenLM state), ids pre-converted"


@dataclass
class BTreeBench:
    """One model's sweep (the options of `smtbench bench btree`)."""
    arpa: str
    text: str
    name: str | None = None
    node_size: int = 31
    node_sizes: str = ""
    batch_sizes: str = ""
    threads: str = "1"
    interleave: int = 16
    repeats: int = 3
    min_queries: int = 1_000_000
    max_lines: int = 0
    no_probing: bool = False
    no_stream_reuse: bool = False
    no_kenlm: bool = False
    kenlm_binary: list[str] = field(default_factory=list)
    no_gpu: bool = False
    out: str | None = None
    progress: bool = False
    protocol: Protocol | None = None  # the repeat protocol (default: exactly `repeats` alternating repeats)


def run_bench(cfg: BTreeBench) -> int:
    """Validate, then run the sweep; KenLM peers' temporary id streams are removed whatever happens."""
    import os

    from ..lm.btree import MAX_INTERLEAVE, check_node_size
    from ..lm.kenlm_peer import parse_binaries

    cores = os.cpu_count() or 1
    threads = sorted({cores if t == 0 else t for t in parse_int_list(cfg.threads, 0, 1024, "--threads")})
    node_sizes = parse_int_list(cfg.node_sizes, 3, 1023, "--node-sizes") if cfg.node_sizes.strip() else []
    batch_sizes = parse_int_list(cfg.batch_sizes, 1, 1 << 30, "--batch-sizes") if cfg.batch_sizes.strip() else []
    check_node_size(cfg.node_size)
    for k in node_sizes:
        check_node_size(k)
    if any(t < 1 or t > 1024 for t in threads):
        raise ValueError(f"--threads must be in 1..1024 (0 = all cores), got {threads}")
    if any(b < 1 for b in batch_sizes):
        raise ValueError(f"--batch-sizes must be >= 1 (an empty batch is not a batch), got {batch_sizes}")
    if not 0 <= cfg.interleave <= MAX_INTERLEAVE:
        raise ValueError(f"--interleave must be in 0..{MAX_INTERLEAVE}, got {cfg.interleave}")
    if cfg.repeats < 1 or cfg.min_queries < 0 or cfg.max_lines < 0:
        raise ValueError("--repeats must be >= 1; --min-queries and --max-lines >= 0")
    if cfg.protocol is None:
        cfg.protocol = Protocol(repeats=cfg.repeats)
    cfg.protocol.validate()
    for path in (cfg.arpa, cfg.text):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: {path}")
    peer_specs = parse_binaries(cfg.kenlm_binary)
    peers: list = []
    try:
        return _run(cfg, peer_specs, peers)
    finally:
        for peer in peers:
            peer.close()


def _run(cfg: BTreeBench, peer_specs: dict[str, str], peers: list) -> int:
    import gc
    import os
    import threading
    import time
    from pathlib import Path

    import numpy as np

    from ..lm import backends, cuda
    from ..lm.arpa import plain_arpa, read_arpa, synthetic_label
    from ..lm.btree import BTreeLM, check_node_size, stream_queries
    from ..lm.kenlm_peer import KenlmPeer, includes as peer_includes
    from ..resources import require_memory
    from .harness import agree_close, progress as progress_bar, rows as open_rows

    cores = os.cpu_count() or 1
    threads = sorted({cores if t == 0 else t for t in parse_int_list(cfg.threads, 0, 1024, "--threads")})
    node_sizes = parse_int_list(cfg.node_sizes, 3, 1023, "--node-sizes") if cfg.node_sizes.strip() else []
    batch_sizes = parse_int_list(cfg.batch_sizes, 1, 1 << 30, "--batch-sizes") if cfg.batch_sizes.strip() else []
    check_node_size(cfg.node_size)

    name = cfg.name or Path(cfg.arpa).name.split(".arpa")[0]
    model = read_arpa(cfg.arpa)
    lines, enc, reps = backends.read_document(model, cfg.text, cfg.max_lines, cfg.min_queries)
    # the tiled stream, its query rows (order ids + a row each) and 8 bytes a query: checked before tiling
    require_memory(enc.tokens.nbytes * reps * (2 + model.order) + enc.queries * reps * 8, "the query rows")
    tokens = np.tile(enc.tokens, reps)
    q = stream_queries(tokens, model.order)
    nq = len(q)
    require_memory(tokens.nbytes + q.nbytes + nq * 8, "the query rows")
    synth = synthetic_label(cfg.arpa)
    common = dict(model=name, arpa=cfg.arpa, synthetic=bool(synth), order=model.order,
                  ngrams=int(sum(model.counts)), counts=model.counts, vocab=len(model.vocab), text=cfg.text,
                  queries=nq, text_repeats=reps)
    for kind, path in sorted(peer_specs.items()):  # ids prepared now, outside any timing
        peers.append(KenlmPeer(kind, path, lines, reps))

    gpu_ok, gpu_why = (False, "disabled with --no-gpu") if cfg.no_gpu else cuda.available()
    gpu_sizes: list[int] = cuda.compiled_node_sizes() if gpu_ok else []

    ks = sorted(set(node_sizes) | {cfg.node_size})
    lms: dict[int, BTreeLM] = {}
    for k in ks:
        lms[k] = BTreeLM(model, k, source=cfg.arpa)
    gpus: dict[int, object] = {}
    if gpu_ok:
        for k in ks:
            if k in gpu_sizes:
                gpus[k] = cuda.CudaBTreeLM(lms[k])

    probing = None
    if not cfg.no_probing:
        from ..lm.probing import ProbingLM

        probing = ProbingLM(model, source=cfg.arpa)
    vocab_size = len(model.vocab)
    del model
    gc.collect()

    # sentence-aligned chunks of the token stream for multi-threaded probing
    marks = np.flatnonzero((tokens & np.uint32(backends.SENTENCE_MARK)) != 0)

    def stream_chunks(t: int) -> list[np.ndarray]:
        cuts = [int(marks[min(len(marks) - 1, (len(marks) * i) // t)]) for i in range(t)] + [len(tokens)]
        return [np.ascontiguousarray(tokens[a:b]) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]

    chunks = {t: stream_chunks(t) for t in threads}

    def probing_run(t: int) -> tuple[int, np.ndarray]:
        assert probing is not None
        if t == 1:
            r = probing.score_stream(tokens, 0)
            return r.elapsed_ns, r.logprob
        outs: list = [None] * len(chunks[t])

        def work(i: int) -> None:
            outs[i] = probing.score_stream(chunks[t][i], 0)

        ths = [threading.Thread(target=work, args=(i,)) for i in range(len(chunks[t]))]
        t0 = time.perf_counter_ns()
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        ns = time.perf_counter_ns() - t0
        return ns, np.concatenate([o.logprob for o in outs])

    prob = np.empty(nq, dtype=np.float32)
    reference: dict[str, np.ndarray] = {}
    checksums: dict[str, str] = {}

    def check_scores(label: str, p: np.ndarray) -> str:
        c = float(p.astype(np.float64).sum()).hex()
        if "btree" not in reference:
            reference["btree"] = p.copy()
        else:
            must_agree(np.array_equal(reference["btree"], p),
                       f"{cfg.arpa}: B-tree scores of {label} differ from the first B-tree point")
        checksums[label] = c
        return c

    # points: (sweep, backend, K, threads, batch)
    points: list[tuple[str, str, int, int, int]] = []
    for t in threads:
        points.append(("table", "btree", cfg.node_size, t, nq))
        if not cfg.no_stream_reuse:
            points.append(("table", "btree-reuse", cfg.node_size, t, nq))
        if probing is not None:
            points.append(("table", "probing", 0, t, nq))
    for k in node_sizes:
        points.append(("node_size", "btree", k, 1, nq))
    for b in batch_sizes:
        points.append(("batch", "btree", cfg.node_size, 1, b))
    gpu_points: list[tuple[str, int, int]] = []
    if gpu_ok:
        gpu_points += [("table", cfg.node_size, nq)] if cfg.node_size in gpus else []
        gpu_points += [("node_size", k, nq) for k in node_sizes if k in gpus]
        gpu_points += [("batch", cfg.node_size, b) for b in batch_sizes if cfg.node_size in gpus]

    rows: list[dict] = []

    with open_rows("glm_btree", cfg.out) as w:
        total = (cfg.repeats * (len(points) + len(gpu_points) + len(peers) * len(threads))
                 + (0 if cfg.no_kenlm else cfg.repeats))
        bar = progress_bar(total, cfg.progress, f"btree {name}")
        lms[cfg.node_size].query_into(q, prob, cfg.interleave, 1)  # warm-up

        def cpu_point(rep: int, sweep: str, be: str, k: int, t: int, b: int) -> None:
            if be == "probing":
                ns, lp = probing_run(t)
                must_agree(np.allclose(lp, reference.get("btree", lp), rtol=0, atol=1e-5),
                           f"{cfg.arpa}: probing and B-tree per-query scores differ by > 1e-5")
                rows.append(w.emit(**common, sweep=sweep, backend="probing", path="sequential",
                                   node_size=None, threads=t, batch=nq, repeat=rep,
                                   model_bytes=probing.nbytes, elapsed_ns=ns, qps=nq / ns * 1e9,
                                   checksum=float(lp.astype(np.float64).sum()).hex(),
                                   includes=INCLUDES_PROBING))
            else:
                lm = lms[k]
                reuse = be == "btree-reuse"
                if b >= nq:
                    t0 = time.perf_counter_ns()
                    lm.query_into(q, prob, cfg.interleave, t, reuse)
                    ns = time.perf_counter_ns() - t0
                else:
                    views = [q[i:i + b] for i in range(0, nq, b)]
                    outs = [prob[i:i + b] for i in range(0, nq, b)]
                    t0 = time.perf_counter_ns()
                    for qv, ov in zip(views, outs):
                        lm.query_into(qv, ov, cfg.interleave, t, reuse)
                    ns = time.perf_counter_ns() - t0
                c = check_scores(f"{be} K={k} threads={t} batch={b}", prob)
                rows.append(w.emit(**common, sweep=sweep, backend=be,
                                   path="cpu-stream-reuse" if reuse else "cpu", node_size=k,
                                   threads=t, interleave=cfg.interleave, simd=lm.simd(), batch=b,
                                   repeat=rep, model_bytes=lm.nbytes, elapsed_ns=ns, qps=nq / ns * 1e9,
                                   checksum=c, includes=(INCLUDES_REUSE if reuse else INCLUDES_CPU)
                                   + ("; one Python call per batch" if b < nq else "")))

        def gpu_point(rep: int, sweep: str, k: int, b: int) -> None:
            g = gpus[k]
            kern = tot = 0.0
            gp = np.empty(nq, dtype=np.float32)
            for i in range(0, nq, b):
                p_i, _ = g.query(q[i:i + b], with_len=False)  # type: ignore[attr-defined]
                gp[i:i + b] = p_i
                kern += g.last_kernel_ms  # type: ignore[attr-defined]
                tot += g.last_total_ms  # type: ignore[attr-defined]
            c = check_scores(f"GPU K={k} batch={b}", gp)
            for path, ms in (("gpu-kernel", kern), ("gpu-with-copies", tot)):
                rows.append(w.emit(**common, sweep=sweep, backend="btree-cuda", path=path, node_size=k,
                                   threads=None, batch=b, repeat=rep, model_bytes=lms[k].nbytes,
                                   elapsed_ns=ms * 1e6, qps=nq / (ms * 1e-3) if ms > 0 else None,
                                   checksum=c, gpu=gpu_why,
                                   includes="CUDA events; " + ("kernel only" if path == "gpu-kernel" else
                                                               "queries host->device + kernel + answers back")))

        def peer_point(rep: int, peer, t: int) -> None:  # KenLM's C++ programs, at one of the table's thread counts
            k = peer.query(threads=t)
            ours = float(reference["btree"].astype(np.float64).sum())
            must_agree(k.queries == nq, f"{peer.model}: kenlm_benchmark counted {k.queries} queries, we {nq}")
            agree_close(f"{peer.model}: KenLM's log10 sum", ours, {peer.kind: k.log10_sum}, rel_tol=1e-4)  # float sums
            rows.append(w.emit(**common, sweep="table", backend=f"kenlm-{peer.kind}-cpp",
                               path=f"kenlm_benchmark -q -t {t}", node_size=None, threads=t, batch=nq, repeat=rep,
                               model_bytes=peer.nbytes, elapsed_ns=k.wall_s * 1e9, qps=nq / k.wall_s,
                               cpu_qps=nq / k.cpu_s if k.cpu_s > 0 else None, rss_max_bytes=k.rss_max_bytes,
                               peer_minor_faults=k.minor_faults, checksum=float(k.log10_sum).hex(),
                               includes=peer_includes(t)))

        # every point of ours, the GPU's and KenLM's in every repeat (smtbench.protocol: alternating or seeded order,
        # per-repeat ratios, the slow-spell probe, adaptive repeats)
        from ..protocol import Ratio, Task

        def task(key: str, fn, args) -> Task:
            def run(rep: int) -> float:
                fn(rep, *args)
                return rows[-1]["elapsed_ns"]
            return Task(key, run)

        tasks = ([task("/".join(map(str, p)), cpu_point, p) for p in points]
                 + [task("gpu/" + "/".join(map(str, p)), gpu_point, p) for p in gpu_points]
                 + [task(peer_key(f"kenlm-{peer.kind}-cpp", t), peer_point, (peer, t))
                    for peer in peers for t in threads])
        keys = {t.key for t in tasks}
        bt1 = f"table/btree/{cfg.node_size}/1/{nq}"
        # the B-tree over each KenLM program at the same thread count (a multi-thread row has its own peer, issue 40)
        ratios = [Ratio.speedup(f"btree_vs_{k}" + ("" if t == 1 else f"_t{t}"), bt, peer_key(k, t))
                  for t in threads for bt in [f"table/btree/{cfg.node_size}/{t}/{nq}"]
                  for k in ("kenlm-trie-cpp", "kenlm-probing-cpp") if peer_key(k, t) in keys and bt in keys]
        if bt1 in keys and f"table/probing/0/1/{nq}" in keys:
            ratios.append(Ratio.speedup("btree_vs_probing_1", bt1, f"table/probing/0/1/{nq}"))
        from .harness import working_set_probe
        regime = (working_set_probe(f"glm_btree/{name}", lambda part: probing.score_stream(part, 0), tokens,
                                    mark=backends.SENTENCE_MARK) if probing is not None else None)
        summary = Sweep(f"btree {name}", cfg.protocol, w, ratios=ratios, progress=bar, regime=regime).add(
            *tasks, peers=[peer_key(f"kenlm-{peer.kind}-cpp", t) for peer in peers for t in threads]).run()
        kept_repeats = summary.repeats
        if not gpu_ok:
            for sweep, k, b in ([("table", cfg.node_size, nq)] + [("node_size", k, nq) for k in node_sizes]
                                + [("batch", cfg.node_size, b) for b in batch_sizes]):
                for path in ("gpu-kernel", "gpu-with-copies"):
                    rows.append(w.emit(**common, sweep=sweep, backend="btree-cuda", path=path, node_size=k,
                                       threads=None, batch=b, repeat=None, model_bytes=lms[k].nbytes,
                                       elapsed_ns=None, qps=None, checksum=None,
                                       gpu=f"no GPU lent: {gpu_why}", includes="not measured"))
        # B-stump statistics (§5.2) and sizes for every K
        for k, lm in lms.items():
            for st in lm.stats():
                rows.append(w.emit(**common, sweep="stats", backend="btree", path="cpu", node_size=k,
                                   model_bytes=lm.nbytes,
                                   **{("ngram_order" if kk == "order" else kk): v for kk, v in st.items()}))
        ours = float(reference["btree"].astype(np.float64).sum())
        del probing
        gc.collect()
        if not cfg.no_kenlm:
            import kenlm

            with plain_arpa(cfg.arpa) as plain:
                km = kenlm.Model(plain)
            tiled = lines * reps
            score = km.score
            for rep in range(kept_repeats):  # after the paired loop (its memory is freed first): paired by index only
                t0 = time.perf_counter_ns()
                tot_k = 0.0
                for line in tiled:
                    tot_k += score(line, bos=True, eos=True)
                ns = time.perf_counter_ns() - t0
                agree_close(f"{cfg.arpa}: kenlm's log10 sum", ours, {"kenlm-module": tot_k}, rel_tol=1e-5, abs_tol=1e-3)
                rows.append(w.emit(**common, sweep="table", backend="kenlm-module", path="Model.score",
                                   node_size=None, threads=1, batch=nq, repeat=rep, model_bytes=None,
                                   elapsed_ns=ns, qps=nq / ns * 1e9, checksum=float(tot_k).hex(),
                                   includes="kenlm module Model.score per sentence (a Python call per "
                                            "sentence, string splitting and vocabulary hashing per word)"))
                bar.update()
        bar.close()
    del vocab_size
    return 0


def peer_key(backend: str, threads: int) -> str:
    """The repeat loop's key of a KenLM program at a thread count (one thread: the backend's name, as before)."""
    return backend if threads == 1 else f"{backend}/{threads}"


def main(args: argparse.Namespace) -> int:
    """`bench glm_btree` (options: VERBS above)."""
    from dataclasses import fields

    return run_bench(BTreeBench(**{f.name: getattr(args, f.name) for f in fields(BTreeBench) if f.name != "protocol"},
                                protocol=Protocol.from_args(args)))
