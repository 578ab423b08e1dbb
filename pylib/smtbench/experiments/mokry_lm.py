"""`smtbench bench mokry_lm`: the LM scoring sweep (Mokry §3.2, Table 3.3, Fig 3.5): one model, one test document
pre-converted to ids, every backend point (sequential; automaton with each queue size; any other registered backend),
repeats interleaved; then the `kenlm` module's ``Model.score`` on the same lines for reference.

Every row carries the log10 sum as a checksum; all of our backends must agree bit for bit (the
per-word scores are summed in query order), and kenlm's total must agree within float rounding —
otherwise the sweep fails."""
from __future__ import annotations

import argparse
import gc
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..lm import backends
from ..lm.arpa import plain_arpa, read_arpa, synthetic_label
from ..lm.probing import MAX_QUEUE, ProbingLM
from ..machine import HugePages
from ..resources import require_memory
from .harness import (Protocol, Ratio, Task, agree, agree_close, must_agree,
                      progress as progress_bar, rows as open_rows, timing_lock, working_set_probe)

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `mokry_lm` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("mokry_lm", ("lm",),
         help="LM scoring: sequential vs. automaton queue (Mokry §3.2, Table 3.3, Fig 3.5)",
         settings=(
             arg("--arpa", required=True, help="ARPA model (plain, .gz or .xz)"),
             arg("--text", required=True, config=True, help="test document, one tokenized sentence per line"),
             arg("--name", help="model label in the rows (default: the file name)"),
             arg("--queue-sizes", default="1-16", config=True, help="automaton queue sizes, e.g. 1-16 or 1,2,4,8"),
             protocol(repeats=3),
             arg("--min-queries", type=int, default=1_000_000, config=True,
                 help="repeat the document until at least this many queries (0 = once)"),
             arg("--max-lines", type=int, default=0, help="use only the first N lines (0 = all)"),
             arg("--backends", default="sequential,automaton", config=True, grid=True,
                 help="comma list of registered backends; 'automaton' and 'automaton-line' expand over "
                      "--queue-sizes; '-line' = the same LM probed from each n-gram's cache line"),
             arg("--no-kenlm", dest="kenlm", action="store_false", config=True,
                 help="skip the row for the kenlm module's Model.score"),
             arg("--kenlm-binary", action="append", default=[], metavar="KIND=PATH",
                 help="KenLM's own model of the same ARPA (build_binary probing|trie), timed by kenlm_benchmark "
                      "-q -t 1 in every repeat beside ours (repeatable: probing=... trie=...)"),
             arg("--multiplier", type=float, default=1.5, help="probing buckets per n-gram (KenLM: 1.5)"),
             arg("--lock", help="hold an flock on this file while timing only (e.g. /tmp/smtbench-bench.lock); "
                                "loading the model happens outside it"),
             arg("--out", help="write rows here (atomically) instead of stdout"),
             arg("--progress", action="store_true", help="show a progress bar on stderr"),
             key("models", grid=True, help="model names; default: the names of this grid's lm_models"),
             key("kenlm_cpp", True, type=bool,
                 help="add KenLM's C++ probing and trie rows (--kenlm-binary: build_binary + kenlm_benchmark -t 1)"),
         )),
)


OURS_INCLUDES = "ids pre-converted (no string handling); per-word log10 p and length written; sum in query order"
KENLM_INCLUDES = ("kenlm module Model.score(line, bos, eos) per sentence: a Python call per sentence, string "
                  "splitting and vocabulary hashing per word, KenLM's probing model loaded from the same ARPA")


@dataclass
class LmBench:
    arpa: str
    text: str
    name: str | None = None
    queue_sizes: list[int] = field(default_factory=lambda: list(range(1, 17)))
    repeats: int = 3
    min_queries: int = 1_000_000
    max_lines: int = 0
    backends: list[str] = field(default_factory=lambda: ["sequential", "automaton"])
    kenlm: bool = True
    multiplier: float = 1.5
    lock: str | None = None  # hold this flock only while timing (loading happens outside it)
    kenlm_binaries: dict[str, str] = field(default_factory=dict)  # kind (probing|trie) -> KenLM binary model
    protocol: Protocol | None = None  # the repeat protocol (default: exactly `repeats` alternating repeats)

    def validate(self) -> None:
        bad = [q for q in self.queue_sizes if not 1 <= q <= MAX_QUEUE]
        if bad:
            raise ValueError(f"--queue-sizes must be in 1..{MAX_QUEUE}, got {bad}")
        if self.repeats < 1:
            raise ValueError(f"--repeats must be >= 1, got {self.repeats}")
        if self.protocol is None:
            self.protocol = Protocol(repeats=self.repeats)
        self.protocol.validate()
        if self.min_queries < 0 or self.max_lines < 0:
            raise ValueError("--min-queries and --max-lines must be >= 0")
        if not self.multiplier > 1.0:
            raise ValueError(f"--multiplier must be > 1, got {self.multiplier}")
        for p in (self.arpa, self.text):
            if not os.path.isfile(p):
                raise FileNotFoundError(f"no such file: {p}")
        from ..lm.kenlm_peer import KINDS
        bad_kinds = [k for k in self.kenlm_binaries if k not in KINDS]
        if bad_kinds:
            raise ValueError(f"--kenlm-binary kinds {bad_kinds}: one of {', '.join(KINDS)}")
        known = backends.names()
        unknown = [b for b in self.backends if b not in known]
        if unknown or not self.backends:
            raise ValueError(f"unknown --backends {unknown}; known: {', '.join(known)}")


def run_bench(b: LmBench, out: str | None = None, progress: bool = False) -> list[dict]:
    opened: list = []  # KenLM peers' temporary id streams, removed whatever happens
    try:
        return _run_bench(b, out, progress, opened)
    finally:
        for peer in opened:
            peer.close()


def _run_bench(b: LmBench, out: str | None, progress: bool, opened: list) -> list[dict]:
    b.validate()
    name = b.name or Path(b.arpa).name.split(".arpa")[0]
    synth = synthetic_label(b.arpa)
    model = read_arpa(b.arpa)
    lines, enc, reps = backends.read_document(model, b.text, b.max_lines, b.min_queries)
    queries = enc.queries * reps
    require_memory(enc.tokens.nbytes * reps + queries * 5, "the test document")  # before tiling
    tokens = np.tile(enc.tokens, reps)
    oovs = int(enc.oov.sum()) * reps

    def build(line_aligned: bool) -> tuple[ProbingLM, HugePages]:
        """The probing LM, and how much of it the kernel put on huge pages (recorded in its rows)."""
        with HugePages(f"{b.arpa}: probing LM{' (line-aligned)' if line_aligned else ''}", 0) as hp:
            built = ProbingLM(model, multiplier=b.multiplier, source=b.arpa, line_aligned=line_aligned)
            hp.nbytes = built.nbytes
        return built, hp

    on_huge: dict[int, HugePages] = {}
    lm = lm_line = None
    if {"sequential", "sequential-pf", "automaton", "automaton-pf"} & set(b.backends):
        lm, hp = build(False)
        on_huge[id(lm)] = hp
    if {"sequential-line", "automaton-line"} & set(b.backends):
        lm_line, hp = build(True)
        on_huge[id(lm_line)] = hp
    points: list[tuple[str, int | None, backends.Scorer]] = []
    for be in b.backends:
        shared = lm_line if be.endswith("-line") else lm
        if be in ("sequential", "sequential-line", "sequential-pf"):
            points.append((be, 0, backends.make(be, model, lm=shared)))
        elif be in ("automaton", "automaton-line", "automaton-pf"):
            points += [(be, q, backends.make(be, model, queue_size=q, lm=shared)) for q in b.queue_sizes]
        else:
            points.append((be, None, backends.make(be, model)))
    counts = model.counts
    vocab_size = len(model.vocab)
    model.ngrams = []  # the scorers hold their own structures now
    gc.collect()
    common = dict(model=name, arpa=b.arpa, synthetic=bool(synth), synthetic_label=synth, order=len(counts),
                  ngrams=int(sum(counts)), counts=counts, vocab=vocab_size, text=b.text, text_lines=len(lines),
                  text_repeats=reps, queries=queries, oovs=oovs)
    rows: list[dict] = []
    sums: dict[str, float] = {}
    with open_rows("mokry_lm", out) as writer:
        # the repeat loop raises the total as it retakes / goes on
        bar = progress_bar(len(points) * b.repeats + (b.repeats if b.kenlm else 0), progress, f"lm {name}")
        from ..lm.kenlm_peer import INCLUDES as PEER_INCLUDES, KenlmPeer
        peers = opened
        for kind, path in sorted(b.kenlm_binaries.items()):
            peers.append(KenlmPeer(kind, path, lines, reps))
        bar.total += len(peers) * b.repeats
        km = None
        if b.kenlm:  # loaded before timing, so that one hold of the lock times everything
            import kenlm

            with plain_arpa(b.arpa) as plain:
                km = kenlm.Model(plain)
        with timing_lock(b.lock):
            for _, _, sc in points[:1]:
                sc.score_stream(tokens)  # warm-up: page in the model and the document

            def ours_point(rep: int, be: str, q: int | None, sc) -> None:
                r = sc.score_stream(tokens)
                sums[f"{be}/{q}"] = r.log10_sum
                lm_of = getattr(sc, "lm", None)  # our probing LM (None for other registered backends)
                hp = on_huge.get(id(lm_of))
                rows.append(writer.emit(
                    **common, backend=be, queue_size=q, repeat=rep, model_bytes=int(sc.nbytes),
                    huge_pages=bool(getattr(lm_of, "huge_pages", False)),
                    lm_huge_mib=hp.mib if hp else None, lm_huge_share=hp.share if hp else None,
                    multiplier=getattr(lm_of, "multiplier", None),
                    elapsed_ns=r.elapsed_ns, ns_per_query=r.elapsed_ns / queries, log10_sum=r.log10_sum,
                    checksum=float(r.log10_sum).hex(), includes=OURS_INCLUDES))

            def peer_point(rep: int, peer) -> None:
                k = peer.query(threads=1)
                must_agree(k.queries == queries,
                           f"{peer.model}: kenlm_benchmark counted {k.queries} queries, we {queries}")
                rows.append(writer.emit(
                    **common, backend=f"kenlm-{peer.kind}-cpp", queue_size=None, repeat=rep,
                    model_bytes=peer.nbytes, huge_pages=None, multiplier=None, elapsed_ns=k.wall_s * 1e9,
                    ns_per_query=k.wall_s * 1e9 / queries, cpu_ns_per_query=k.cpu_s * 1e9 / queries,
                    rss_max_bytes=k.rss_max_bytes, log10_sum=k.log10_sum, checksum=float(k.log10_sum).hex(),
                    includes=PEER_INCLUDES))
                sums[f"kenlm-{peer.kind}-cpp/{rep}"] = k.log10_sum

            ours_bytes = points[0][2].nbytes

            def module_point(rep: int) -> float:  # the kenlm module (a Python call per sentence), a point like any
                t0 = time.perf_counter_ns()
                total = 0.0
                for line in tiled:
                    total += score(line, bos=True, eos=True)
                ns = time.perf_counter_ns() - t0
                sums[f"kenlm-module/{rep}"] = total
                rows.append(writer.emit(
                    **common, backend="kenlm-module", queue_size=None, repeat=rep, model_bytes=int(ours_bytes),
                    huge_pages=None, multiplier=None, elapsed_ns=ns, ns_per_query=ns / queries,
                    log10_sum=total, checksum=float(total).hex(), includes=KENLM_INCLUDES))
                return ns

            if km is not None:
                tiled = lines * reps
                score = km.score
            # every point of ours, KenLM's C++ programs' and the kenlm module's in every repeat (smtbench.protocol:
            # alternating or seeded order, per-repeat ratios, the slow-spell probe, adaptive repeats)
            def ours_task(be: str, q: int | None, sc) -> Task:
                def fn(rep: int) -> float:
                    ours_point(rep, be, q, sc)
                    return rows[-1]["elapsed_ns"]
                return Task(f"{be}/{q}", fn)

            def peer_task(peer) -> Task:
                def fn(rep: int) -> float:
                    peer_point(rep, peer)
                    return rows[-1]["elapsed_ns"]
                return Task(f"kenlm-{peer.kind}-cpp", fn)

            tasks = [ours_task(be, q, sc) for be, q, sc in points] + [peer_task(peer) for peer in peers]
            if km is not None:
                tasks.append(Task("kenlm-module", module_point))
            auts = [f"automaton/{q}" for be, q, _ in points if be == "automaton"]

            def best_aut(t):
                v = [t[k] for k in auts if k in t]
                return min(v) if v else None

            ratios = []
            if "sequential/0" in {t.key for t in tasks} and auts:
                ratios.append(Ratio("speedup", lambda t: t["sequential/0"] / best_aut(t) if best_aut(t) else None))
            if any(p.kind == "probing" for p in peers):
                if auts:
                    ratios.append(Ratio("automaton_vs_kenlm_probing_cpp",
                                        lambda t: t["kenlm-probing-cpp"] / best_aut(t) if best_aut(t) else None))
                ratios.append(Ratio.speedup("sequential_vs_kenlm_probing_cpp", "sequential/0", "kenlm-probing-cpp"))
            def headline(kept: list[dict[str, float]]) -> list[str]:
                """--focus: the points the ratios compare, the automaton at the queue size of its best time so far
                (the report's best_queue_size is the best time's: later repeats can only lower this one's)."""
                low = {k: min(t[k] for t in kept if k in t) for k in auts if any(k in t for t in kept)}
                best = [min(low, key=low.get)] if low else []
                return ["sequential/0", "kenlm-probing-cpp"] + best

            seq = [sc for be, _, sc in points if be == "sequential"]
            regime = working_set_probe(f"mokry_lm/{name}", seq[0].score_stream, tokens,
                                       mark=backends.SENTENCE_MARK) if seq else None
            Sweep(f"lm {name}", b.protocol, writer, ratios=ratios, progress=bar, focus=headline, regime=regime).add(
                *tasks, peers=[t.key for t in tasks if t.key.startswith("kenlm-")]).run()
            module_sums = {key: sums.pop(key) for key in [x for x in sums if x.startswith("kenlm-module/")]}
            kenlm_sums = {key: sums.pop(key) for key in [x for x in sums if x.startswith("kenlm-")]}
            ours = agree(f"{b.arpa}: log10 sums", sums, "backends/queue sizes/repeats")
            agree_close(f"{b.arpa}: KenLM's log10 sum", ours, kenlm_sums, rel_tol=1e-4)  # float per 4,096 words
            agree_close(f"{b.arpa}: kenlm's log10 sum", ours, module_sums, rel_tol=1e-5, abs_tol=1e-3)
        bar.close()
    return rows


def main(args: argparse.Namespace) -> int:
    """`bench mokry_lm` (options: VERBS above)."""
    from ..benchutil import parse_int_list
    from ..lm.kenlm_peer import parse_binaries

    b = LmBench(arpa=args.arpa, text=args.text, name=args.name,
                queue_sizes=parse_int_list(args.queue_sizes, 1, 16, "--queue-sizes"),
                repeats=args.repeats, min_queries=args.min_queries, max_lines=args.max_lines,
                backends=[x.strip() for x in args.backends.split(",") if x.strip()], kenlm=args.kenlm,
                multiplier=args.multiplier, lock=args.lock, kenlm_binaries=parse_binaries(args.kenlm_binary),
                protocol=Protocol.from_args(args))
    run_bench(b, out=args.out, progress=args.progress)
    return 0
