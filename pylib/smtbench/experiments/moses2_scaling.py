"""`smtbench bench moses2_scaling` (old name: `bench scaling`): the Moses2 paper's scalability experiments (sections
4.1, 4.3-4.5) on a Moses model -- threads, memory pools, the binarized table's static cache, compression and
reordering storage, short against long sentences, a sampled component profile, load time and peak RSS; every timed
point's 1-best and scores checked identical to the single-threaded text-table decoder (a mismatch fails the run: a
broken fast path), which is compared with Moses2's own run. The points' rows and their repeats: the harness."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ioutil import words as split_words
from .. import procs

from .frame import Sweep, Verb, arg, key, protocol

if TYPE_CHECKING:
    from ..decode.moses_run import Decoder
    from ..peers import Peer

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `moses2_scaling` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("moses2_scaling", ("scaling",),
         help="Moses2 paper 4.1/4.3-4.5: threads, pools, cache, compression, reordering storage, profile",
         description="Loads the text-table model and the binarized tables (every --caches size on the main table), "
                     "decodes the reference pass single-threaded on the text model (compared with --oracle where "
                     "given), then --repeats interleaved rounds over every point (table, cache, pool, threads, "
                     "subset), each checked to give the reference's 1-best and scores; then profiled runs (Table 3) "
                     "and, with --rss, peak-RSS runs in child processes.",
         settings=(
             arg("-f", "--config", required=True, help="moses.ini (recorded in every row as `model`)"),
             arg("--input", required=True),
             arg("--reference", required=True, help="reference translations (BLEU)"),
             arg("--oracle", default=None,
                 help="Moses2's recorded run of this model and input (PREFIX.1best, PREFIX.1best-score; the Moses "
                      "oracle's m2-cube400); without it the oracle_* fields are empty"),
             arg("--table", nargs=2, action="append", required=True, metavar=("NAME", "PATH"),
                 help="a binarized table: NAME is {plain,comp}-{int,sep} (compression, reordering storage)"),
             arg("--same-tables", nargs=2, default=None, metavar=("PT", "RT"),
                 help="text phrase and reordering tables with exactly the binarized tables' numbers (e.g. the "
                      "full table filtered to the input), for the reference every point must reproduce; default: "
                      "the ini's tables (then the binarized tables must have been built from them)"),
             arg("--table-source", nargs=2, default=None, metavar=("PT", "RT"),
                 help="the text phrase and reordering tables the --table binaries were built from, where they are "
                      "not the ini's (e.g. the model's full table): our models of the binaries load the ini with "
                      "these two paths (its weights, LM and settings), so each binary's provenance is checked "
                      "against the table it stands for; default: the ini's tables"),
             arg("--main", default="plain-int", help="the table of our configuration"),
             arg("--cache", type=int, default=10000, help="our configuration's cache size", config=True),
             arg("--caches", default="0,1000,2000,4000,10000", help="Table 6's cache sizes", config=True, grid=True),
             arg("--threads", default="1,2", help="thread counts", config=True, grid=True),
             arg("--pop-limit", type=int, default=400, config=True),
             arg("-s", "--stack-size", type=int, default=400, config=True),
             arg("--sentences", type=int, default=0, help="first N input lines (0 = all)", config=True),
             arg("--long-words", type=int, default=0,
                 help="Fig 11: verses of more words are 'long', the others 'short' (0 = the median length)"),
             protocol(repeats=3),
             arg("--profile-us", type=int, default=100, config=True,
                 help="profile sampling period (0 = no profile rows)"),
             arg("--rss", action="store_true", help="also measure peak RSS of `decode cube` child processes"),
             arg("--rss-same-model", default=None, metavar="PATH",
                 help="with --rss: also a binarized table of exactly the ini's (filtered) tables, the model "
                      "Moses2's peak RSS was measured on"),
             arg("--peers", default="", metavar="NAME[,NAME...]", config=True, grid=True,
                 help="live peers, comma-separated (entries of config/peers.yaml serving moses2_scaling: moses2) "
                      "decoding the ini's model and input with the same limits at every --threads count (-threads N), timed in the same "
                      "sweep as our points, beside ours as a process on the same model (the --rss-same-model table, "
                      "else the --main table without --same-tables, else the ini's text tables), loading subtracted "
                      "alike; with --rss also their peak RSS (GNU time) at every thread count. A peer that is not "
                      "built gets a row saying so"),
             arg("--out", required=True, help="JSON-lines rows"),
             key("table", help="binarize the model's full table or its table filtered to the decoded books (full, "
                               "dev)"),
             key("model", "trained",
                 help="trained: the workflow's own model, test books; oracle: the Moses oracle's model, dev books"),
         )),
)


def main(args: argparse.Namespace) -> int:
    """`bench moses2_scaling` (options: VERBS above)."""
    import hashlib
    import os
    import statistics
    import subprocess
    import sys
    import tempfile
    import time

    from ..benchutil import model_path, parse_int_list
    from ..decode.compare import bleu, read_lines, read_scores
    from ..decode.cube import CubeDecoder
    from ..decode.model import PhraseModel
    from ..decode.threads import ThreadedCubeDecoder

    threads = parse_int_list(args.threads, 1, 256, "--threads")
    caches = parse_int_list(args.caches, 0, 10**8, "--caches")
    from .harness import Protocol, must_agree, rows as open_rows

    protocol = Protocol.from_args(args)
    from .. import peers as peer_entries
    names = [x.strip() for x in args.peers.split(",") if x.strip()]
    chosen = peer_entries.select(names, "moses2_scaling", peer_entries.load()) if names else []
    tables = dict(args.table)
    for name in tables:
        if name not in ("plain-int", "comp-int", "plain-sep", "comp-sep"):
            raise ValueError(f"--table {name}: the names are plain-int, comp-int, plain-sep, comp-sep")
    if args.main not in tables:
        raise ValueError(f"--main {args.main}: not among the --table names")
    src = read_lines(args.input)
    refs = read_lines(args.reference)
    n = args.sentences or len(src)
    src, refs = src[:n], refs[:n]
    lens = [len(split_words(s)) for s in src]
    long_words = args.long_words or int(statistics.median(lens))
    subsets = {"all": list(range(n)), "short": [i for i in range(n) if lens[i] <= long_words],
               "long": [i for i in range(n) if lens[i] > long_words]}

    # ---- models: the ini's (Moses2's) model; the text tables with the binarized tables' numbers (the reference
    # every point must reproduce, and the "text" series); the binarized tables (one model per table and cache size)
    from ..decode.ini import load_ini
    oracle_model = PhraseModel(args.config)
    if args.same_tables:
        cfg = load_ini(args.config)
        cfg.feature("PhraseDictionaryMemory").path = Path(args.same_tables[0])
        cfg.feature("LexicalReordering").path = Path(args.same_tables[1])
        text = PhraseModel(cfg, lm=oracle_model.lm)
    else:
        text = oracle_model
    models: dict[tuple[str, int], PhraseModel] = {("text", 0): text}
    loads = []

    # the ini our binaries stand for: the ini itself, or (--table-source) the ini naming the tables they came from
    binary_ini = args.config
    if args.table_source:
        from ..tune.loop import write_ini
        ini_dir = tempfile.TemporaryDirectory(prefix="smtbench-scaling-ini-")
        binary_ini = os.path.join(ini_dir.name, "moses.ini")
        write_ini(args.config, {}, binary_ini, paths={"PhraseDictionaryMemory": args.table_source[0],
                                                      "LexicalReordering": args.table_source[1]})

    def model(table: str, cache: int) -> PhraseModel:
        if (table, cache) not in models:
            m = PhraseModel(binary_ini, binary=tables[table], cache=cache, lm=oracle_model.lm)
            models[(table, cache)] = m
            loads.append({"table": table, "cache": cache, "table_seconds": round(m.table_seconds, 4),
                          "file_bytes": Path(tables[table]).stat().st_size, "cached_options": m.stats.options})
        return models[(table, cache)]

    # ---- the reference pass (single-threaded, text tables), and the ini's model against Moses2
    def single(m: PhraseModel) -> tuple[list[str], list[float]]:
        from ..decode.compare import best_of
        return best_of(CubeDecoder(m, pop_limit=args.pop_limit, stack_size=args.stack_size), src, args.input)

    best, scores = single(text)
    obest, oscores = (best, scores) if text is oracle_model else single(oracle_model)
    theirs = read_lines(args.oracle + ".1best")[:n] if args.oracle else None
    their_scores = read_scores(args.oracle + ".1best-score")[:n] if args.oracle else None
    quality = {"sentences": n, "source_words": sum(lens), "bleu": round(bleu(best, refs), 2),
               "oracle_run": args.oracle,
               "oracle_bleu": round(bleu([t.strip() for t in theirs], refs), 2) if theirs else None,
               "identical_to_oracle": sum(a == b.strip() for a, b in zip(best, theirs)) if theirs else None,
               "mean_score": sum(scores) / n, "oracle_mean_score": sum(their_scores) / n if theirs else None,
               "ini_model_bleu": round(bleu(obest, refs), 2), "ini_model_mean_score": sum(oscores) / n,
               "ini_model_identical_to_oracle": sum(a == b.strip() for a, b in zip(obest, theirs))
               if theirs else None,
               "same_text_as_ini_model": sum(a == b for a, b in zip(best, obest)),
               "max_score_diff_vs_ini_model": max((abs(a - b) for a, b in zip(scores, oscores)), default=0.0),
               "reference_tables": "same-tables" if args.same_tables else "ini",
               "output_sha": hashlib.sha256("\n".join(best).encode()).hexdigest()[:16],
               "long_words": long_words, "short_sentences": len(subsets["short"]),
               "long_sentences": len(subsets["long"])}

    # ---- the points: (table, cache, pool, threads, subset) -> the groups (tables/figures) they serve
    C = args.cache
    points: dict[tuple, set[str]] = {}

    def add(group: str, table: str, cache: int, pool: bool, t: int, subset: str = "all") -> None:
        if table != "text" and table not in tables:
            return
        points.setdefault((table, cache if table != "text" else 0, pool, t, subset), set()).add(group)

    tmax = max(threads)
    for t in threads:
        add("ours", args.main, C, True, t)
        add("text", "text", 0, True, t)
        add("plain", "comp-sep", 0, False, t)
        add("pool", args.main, C, False, t)
        for tb in ("comp-int", "plain-int"):
            add("compression", tb, C, True, t)
        for tb in ("plain-sep", "plain-int"):
            add("reordering", tb, C, True, t)
        for sub in ("short", "long"):
            add("length", args.main, C, True, t, sub)
    for c in caches:
        add("cache", args.main, c, True, tmax)
    for key in points:
        model(key[0], key[1])

    def decode(key: tuple, profile_us: int = 0):
        table, cache, pool, t, subset = key
        idx = subsets[subset]
        dec = ThreadedCubeDecoder(CubeDecoder(models[(table, cache)], pop_limit=args.pop_limit,
                                              stack_size=args.stack_size), threads=t, pool=pool,
                                  profile_us=profile_us)
        lines = (src[i] for i in idx)
        t0 = time.perf_counter()
        got = [(tr.best.text if tr.best else "", tr.best.total if tr.best else 0.0)
               for _, tr in dec.translate_many(lines, args.input)]
        secs = time.perf_counter() - t0
        same = sum(got[k] == (best[i], scores[i]) for k, i in enumerate(idx))
        must_agree(same == len(idx), f"point {key}: {len(idx) - same} of {len(idx)} sentences differ from the "
                                     f"reference (single-threaded text-table decoder): a broken fast path")
        info = {"profile": dec.profile() if profile_us else None, **dec.table_counts()}
        dec.close()
        return secs, sum(lens[i] for i in idx), len(idx), info

    def fields(key: tuple) -> dict:
        table, cache, pool, t, subset = key
        return {"table": table, "cache": cache, "pool": "on" if pool else "off", "threads": t, "subset": subset,
                "groups": ",".join(sorted(points[key])), "pop_limit": args.pop_limit, "stack_size": args.stack_size}

    with open_rows("moses2_scaling", args.out, {"model": model_path(args.config), "input": model_path(args.input)}) as rows:
        rows.emit(kind="quality", **quality)
        for ld in loads:
            rows.emit(kind="load", **ld)
        keys = sorted(points, key=lambda k: (k[3], k[0], k[1], k[2], k[4]))

        def time_point(rep: int, key: tuple) -> float:
            secs, words, sents, info = decode(key)
            rows.emit(kind="timing", repeat=rep, **fields(key), sentences=sents, source_words=words,
                      decode_seconds=round(secs, 6), words_per_second=round(words / secs, 3),
                      identical=sents, lookups=info["lookups"], cache_hits=info["cache_hits"],
                      ro_lookups=info["ro_lookups"])
            return secs * 1e9 * sents / max(1, len(src))  # per whole input: subsets compare with the full run

        sweep = Sweep("moses2_scaling", protocol, rows).points(keys, time_point, key=lambda k: "/".join(map(str, k)))
        live = _live_peers(args, rows, sweep, chosen, threads, src, obest, oscores, tables, C,
                           binary_ini) if chosen else None
        sweep.run()
        if args.profile_us > 0:
            for config, key in (("ours", (args.main, C, True)), ("plain", ("comp-sep", 0, False))):
                if key[0] not in tables:
                    continue
                for t in sorted({1, tmax}):
                    k = (*key, t, "all")
                    points.setdefault(k, set()).add("profile")
                    secs, words, sents, info = decode(k, args.profile_us)
                    rows.emit(kind="profile", config=config, **fields(k), sentences=sents, source_words=words,
                              decode_seconds=round(secs, 6), profile_us=args.profile_us,
                              **{f"samples_{p}": v for p, v in info["profile"].items()})
        if args.rss:
            inp = Path(tempfile.mkdtemp()) / "input.txt"
            inp.write_text("".join(s + "\n" for s in src), encoding="utf-8")
            runs = [("ours", args.main, C), ("text", "text", 0)]
            if args.rss_same_model:
                tables["same-model"] = args.rss_same_model
                runs.append(("ours-same-model", "same-model", C))
            for config, table, cache in runs:
                for t in threads:
                    cmd = [sys.executable, "-c", "import sys; from smtbench.cli import main; sys.exit(main())",
                           "decode", "cube", "-f", args.config if table in ("text", "same-model") else binary_ini,
                           "--pop-limit",
                           str(args.pop_limit), "-s", str(args.stack_size), "--threads", str(t), "-i", str(inp),
                           "-o", os.devnull, "--no-progress"]
                    if table != "text":
                        cmd += ["--binary", str(tables[table]), "--cache", str(cache)]
                    proc = procs.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                    err = proc.stderr.read()
                    status = proc.wait()
                    if status != 0:
                        raise RuntimeError(f"peak-RSS run failed: {' '.join(cmd)}\n{err[-2000:]}")
                    import json
                    rep = json.loads(err.strip().splitlines()[-1])
                    rows.emit(kind="rss", config=config, table=table, cache=cache, threads=t,
                              peak_rss_kb=rep["peak_rss_kb"], words_per_second=rep["words_per_second"],
                              load_seconds=rep["load_seconds"], table_seconds=rep["table_seconds"])
            if live:
                for dec, t in live.rss:
                    kb, wall = _peak_rss(dec, str(inp))
                    rows.emit(kind="rss", config=dec.name, table="ini", cache=None, threads=t, peak_rss_kb=kb,
                              wall_seconds=round(wall, 4), command=dec.describe(), how="GNU time -f %M, whole input")
            inp.unlink()
        if live:
            live.close()
    return 0


class _Live:
    """The live peers' process runs of one sweep: the input files, and the (decoder, threads) whose peak RSS is
    measured after the sweep."""

    def __init__(self, tmp: Any):
        self.tmp = tmp
        self.rss: list[tuple[Decoder, int]] = []

    def close(self) -> None:
        self.tmp.cleanup()


def _live_peers(args: argparse.Namespace, rows: Any, sweep: Sweep, chosen: list[Peer], threads: list[int],
                src: list[str], best: list[str], scores: list[float], tables: dict[str, str],
                cache: int, binary_ini: str) -> _Live | None:
    """Add the live peers (``chosen``, e.g. Moses2) to ``sweep``: at every thread count one point of each peer
    (``-threads N``) and one of ours as a process on the same model (``decode cube --threads N``, the binarized
    table of exactly the ini's tables where there is one), both timed by harness.loading_subtracted and their
    1-best checked against ``best`` / ``scores`` (the ini's model, single-threaded: the identity rule, Moses2 strict)
    first. Rows: kind=peer (the checked run, per system and thread count), kind=peer_timing (each timed repeat)."""
    import tempfile

    from ..decode import moses_run
    from ..decode.compare import peer_identity
    from .harness import loading_subtracted, must_agree

    # absolute: the process runs in the ini's folder (as Moses does: the ini's paths are relative to it)
    if args.rss_same_model:
        ours_table, ours_extra = "same-model", ["--binary", str(Path(args.rss_same_model).resolve()), "--cache",
                                                str(cache)]
    elif not args.same_tables:
        ours_table, ours_extra = args.main, ["--binary", str(Path(tables[args.main]).resolve()), "--cache",
                                             str(cache)]
    else:
        ours_table, ours_extra = "text", []
    tmp = tempfile.TemporaryDirectory(prefix="smtbench-scaling-peers-")
    live = _Live(tmp)
    inp = f"{tmp.name}/input"
    with open(inp, "w", encoding="utf-8") as fh:
        fh.write("".join(s + "\n" for s in src))
    one = moses_run.first_line_file(inp, tmp.name)
    first_words = len(split_words(src[0]))
    words = sum(len(split_words(s)) for s in src) - first_words
    fields = {"pop_limit": args.pop_limit, "stack_size": args.stack_size, "sentences": len(src)}
    systems = []
    for t in threads:
        systems.append((moses_run.our_decoder(binary_ini if ours_table == args.main else args.config, "cube",
                                              args.stack_size, args.pop_limit, threads=t, extra=ours_extra), t))
        for peer in chosen:
            missing = peer.missing()
            if missing:
                if t == threads[0]:  # a row saying so, never a silent skip
                    rows.emit(kind="peer", system=peer.name, label=peer.label, **fields, status=missing)
                continue
            systems.append((moses_run.peer_decoder(peer, args.config, "cube", args.stack_size, args.pop_limit,
                                                   threads=t), t))
    if len(systems) == len(threads):  # no peer built: no process points
        tmp.cleanup()
        return None
    for dec, t in systems:
        r = moses_run.run(dec, inp)
        must_agree(len(r.lines) == len(src), f"{dec.describe()}: {len(r.lines)} output lines for {len(src)} input lines")
        identity = peer_identity(dec.name, best, scores, r.lines, r.scores, digits=r.digits or 6,
                                 line_digits=r.line_digits,
                                 where=f"{dec.describe()} < {args.input}",
                                 strict=True if dec.name == "ours" else dec.strict).as_dict("ours_vs")
        if dec.name == "ours":  # our process on the same model: exactly the reference's lines
            must_agree(identity["ours_vs_identical"] == len(src),
                       f"{dec.describe()}: {len(src) - identity['ours_vs_identical']} lines differ from the "
                       "single-threaded decoding of the ini's model")
        rows.emit(kind="peer", system=dec.name, label=dec.label, **fields, threads=t, status="ok",
                  table=ours_table if dec.name == "ours" else "ini", command=dec.describe(), **identity)
        if dec.name != "ours":
            live.rss.append((dec, t))

    def point(dec, t):
        def fn(rep: int) -> float:
            full, first, secs = loading_subtracted(
                lambda path: moses_run.run(dec, path, keep_output=False, loading=path == one).wall_s, inp, one)
            rows.emit(kind="peer_timing", system=dec.name, repeat=rep, **fields, threads=t,
                      table=ours_table if dec.name == "ours" else "ini", wall_seconds=round(full, 4),
                      first_line_seconds=round(first, 4), decode_seconds=round(secs, 4), timed_words=words,
                      words_per_second=round(words / secs, 3) if secs > 0 else None)
            return secs * 1e9
        return fn

    from .harness import Ratio
    for dec, t in systems:
        key = f"process/{dec.name}/t{t}"
        (sweep.point if dec.name == "ours" else sweep.peer)(key, point(dec, t))
        if dec.name != "ours":
            sweep.ratios.append(Ratio.speedup(f"ours_vs_{dec.name}_t{t}", f"process/ours/t{t}", key))
    return live


def _peak_rss(dec: Decoder, input_path: str) -> tuple[int, float]:
    """(peak RSS kB, wall seconds) of one whole-input run of ``dec`` under GNU time (`-f %M`: a child forked from
    this interpreter would inherit its high-water mark in wait4's ru_maxrss)."""
    import subprocess
    import tempfile
    import time

    with tempfile.NamedTemporaryFile("r", suffix=".rss") as tf, open(input_path, "rb") as src:
        t0 = time.perf_counter()
        r = procs.run(["/usr/bin/time", "-f", "%M", "-o", tf.name, *dec.argv], stdin=src,
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=dec.cwd, group=True)
        wall = time.perf_counter() - t0
        if r.returncode:
            raise RuntimeError(f"{dec.describe()} < {input_path}: exit {r.returncode}: "
                               f"{r.stderr.decode(errors='replace').strip()[-1200:]}")
        return int(tf.read().strip().rsplit("\n", 1)[-1]), wall  # GNU time -f %M: the last line, kB
