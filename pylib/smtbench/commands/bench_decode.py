"""`smtbench bench decode`: decode a test set with one of our decoders on a Moses model, check it against the
Moses oracle's outputs and the independent derivation scorer, and time it (model loading excluded)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["bench"].add_parser(
        "decode", help="decode + check against Moses' outputs + time (rows: one per timed repeat, one quality row)",
        description="A correctness pass (n-best with segmentation, every entry rescored by the independent "
                    "derivation scorer; 1-best compared with each --oracle run: identical lines, model score "
                    "ours >= theirs - 1e-3, BLEU), then --repeats timed passes without n-best (as the oracle's "
                    "quiet timings), each checked to give the same 1-best.")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--search", choices=["normal", "cube"], default="normal")
    p.add_argument("-s", "--stack-size", type=int, default=200)
    p.add_argument("--pop-limit", type=int, default=1000, help="cube pruning's pop limit")
    p.add_argument("--input", required=True, help="source sentences")
    p.add_argument("--reference", required=True, help="reference translations (for BLEU)")
    p.add_argument("--oracle", nargs="*", default=[], metavar="PREFIX",
                   help="reference runs: PREFIX.1best and PREFIX.1best-score (e.g. the oracle's m2-normal200)")
    p.add_argument("--sentences", type=int, default=0, help="decode only the first N lines (0 = all)")
    p.add_argument("--nbest", type=int, default=10, help="n-best size of the correctness pass")
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=1)  # timed passes
    p.add_argument("--outputs", required=True, help="folder for the correctness pass' 1-best, scores, n-best")
    p.add_argument("--peers", nargs="*", default=[], choices=["moses2", "moses"],
                   help="live peers (tools/build_moses.sh): decode the same input with the same model and search "
                        "settings, compare 1-best lines and model scores with ours, and time each beside ours as "
                        "a process in every repeat (alternating order; loading excluded alike: a run on the first "
                        "line only is subtracted). A peer that is not built gets a row saying so")
    p.add_argument("--peer-threads", type=int, default=1, help="threads of every process-timed system (ours: 0 = "
                   "the single-threaded path when 1)")
    p.add_argument("--out", required=True, help="JSON-lines rows")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import hashlib
    from pathlib import Path

    from ..benchutil import RowWriter
    from ..decode.compare import bleu, compare, read_lines, read_scores
    from ..decode.derivation import DerivationScorer, parse_segmentation
    from ..decode.model import PhraseModel
    from ..decode.nbest import printed_tolerance
    from ..decode.cube import CubeDecoder
    from ..decode.normal import NormalDecoder, nbest_line
    from ..ioutil import atomic_open

    from ..protocol import Protocol, run_points

    protocol = Protocol.from_args(args)
    if args.sentences < 0:
        raise ValueError(f"--sentences {args.sentences}: must be >= 0")
    if not 1 <= args.peer_threads <= 256:
        raise ValueError(f"--peer-threads {args.peer_threads}: must be in 1..256")
    src = read_lines(args.input)
    refs = read_lines(args.reference)
    if len(refs) != len(src):
        raise ValueError(f"{args.reference}: {len(refs)} lines but {args.input} has {len(src)}")
    n = args.sentences or len(src)
    src, refs = src[:n], refs[:n]
    words = sum(len(s.split()) for s in src)
    model = PhraseModel(args.config)
    config = {"search": args.search, "stack_size": args.stack_size, "sentences": n, "source_words": words,
              "model": str(args.config), "pop_limit": args.pop_limit if args.search == "cube" else None}
    outdir = Path(args.outputs)

    def decoder(nbest: int):
        if args.search == "cube":
            return CubeDecoder(model, pop_limit=args.pop_limit, stack_size=args.stack_size, nbest=nbest)
        return NormalDecoder(model, stack_size=args.stack_size, nbest=nbest)

    # correctness pass
    dec = decoder(args.nbest)
    scorer = DerivationScorer(model.config, src)
    best, best_scores, entries, mismatched = [], [], 0, 0
    with atomic_open(outdir / "out.nbest") as nb:
        for sid, line in enumerate(src):
            tr = dec.translate(line, f"{args.input}:{sid + 1}")
            b = tr.best
            best.append(b.text if b else "")
            best_scores.append(b.total if b else 0.0)
            for e in tr.entries:
                nb.write(nbest_line(model, sid, e, segmentation=True) + "\n")
                got = scorer.score(sid, parse_segmentation(e.segmentation))
                printed = dict(model.to_ini_order(e.features))
                entries += 1
                ok = all(abs(a - float(format(v, ".6g"))) <= printed_tolerance(v)
                         for name, vals in got.features.items() for a, v in zip(vals, printed[name]))
                mismatched += not ok
    with atomic_open(outdir / "out.1best") as fh:
        fh.write("".join(x + "\n" for x in best))
    with atomic_open(outdir / "out.scores") as fh:
        fh.write("".join(f"{x:.6f}\n" for x in best_scores))
    digest = hashlib.sha256("\n".join(best).encode()).hexdigest()[:16]
    quality = {"bleu": round(bleu(best, refs), 2), "nbest_entries": entries, "nbest_rescore_mismatches": mismatched,
               "output_sha": digest}
    for prefix in args.oracle:
        name = Path(prefix).name
        theirs = read_lines(prefix + ".1best")[:n]
        c = compare(best, best_scores, theirs, read_scores(prefix + ".1best-score")[:n])
        quality.update(c.as_dict(name))
        quality[f"{name}_bleu"] = round(bleu(theirs, refs), 2)
    with atomic_open(args.out) as out:
        rows = RowWriter("decode_" + args.search, out)
        rows.emit(kind="quality", **config, load_seconds=round(model.stats.seconds, 3), **quality)
        dec = decoder(0)

        def time_point(rep: int, point: str) -> float:
            secs, counters, same = 0.0, {}, True
            for sid, line in enumerate(src):
                tr = dec.translate(line)
                secs += tr.seconds
                for k, v in tr.counters.items():
                    counters[k] = counters.get(k, 0) + v
                same &= (tr.best.text if tr.best else "") == best[sid]
            if not same:
                raise RuntimeError("a timed pass gave a different 1-best than the correctness pass")
            rows.emit(kind="timing", repeat=rep, **config, decode_seconds=round(secs, 6),
                      words_per_second=round(words / secs, 3) if secs else None, **counters)
            return secs * 1e9

        run_points(protocol, rows, ["ours"], time_point, label="decode")  # smtbench.protocol
        if args.peers:
            _peers(args, rows, config, src, refs, best, best_scores)
    return 0


def _peers(args: argparse.Namespace, rows, config: dict, src: list[str], refs: list[str], best: list[str],
           best_scores: list[float]) -> None:
    """Moses2 / Moses on the same model and input: one checked run each, then ``--repeats`` timed process runs of
    every system (ours included, as a process) in an order that alternates between repeats."""
    import tempfile

    from .. import moses_peer
    from ..decode import moses_run
    from ..decode.compare import bleu, compare

    pop = args.pop_limit if args.search == "cube" else None
    systems = [moses_run.our_decoder(args.config, args.search, args.stack_size, pop,
                                     threads=args.peer_threads if args.peer_threads > 1 else 0)]
    for name in args.peers:
        if not moses_peer.available(name):
            rows.emit(kind="peer", system=name, **config, status=moses_peer.NOT_BUILT)
            continue
        systems.append(moses_run.moses_decoder(name, args.config, args.search, args.stack_size, pop,
                                               threads=args.peer_threads))
    if len(systems) == 1:
        return
    first_words = len(src[0].split())
    words = sum(len(s.split()) for s in src) - first_words
    with tempfile.TemporaryDirectory(prefix="smtbench-bench-decode-") as tmp:
        inp = f"{tmp}/input"
        with open(inp, "w", encoding="utf-8") as fh:
            fh.write("".join(s + "\n" for s in src))
        one = moses_run.first_line_file(inp, tmp)
        for dec in systems:
            r = moses_run.run(dec, inp)
            if len(r.lines) != len(src):
                raise RuntimeError(f"{dec.describe()}: {len(r.lines)} output lines for {len(src)} input lines")
            c = compare(best, best_scores, r.lines, r.scores or [0.0] * len(src), tolerance=2e-3)
            rows.emit(kind="peer", system=dec.name, **config, status="ok", command=dec.describe(),
                      threads=args.peer_threads, bleu=round(bleu(r.lines, refs), 2), **c.as_dict("ours_vs"))
        for rep in range(args.repeats):
            order = systems if rep % 2 == 0 else systems[::-1]
            for dec in order:
                full = moses_run.run(dec, inp, keep_output=False).wall_s
                first = moses_run.run(dec, one, keep_output=False).wall_s
                secs = full - first
                rows.emit(kind="peer_timing", system=dec.name, repeat=rep, **config, threads=args.peer_threads,
                          position=order.index(dec), wall_seconds=round(full, 4),
                          first_line_seconds=round(first, 4), decode_seconds=round(secs, 4), timed_words=words,
                          words_per_second=round(words / secs, 3) if secs > 0 else None)
