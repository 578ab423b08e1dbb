"""`smtbench bench moses_decode` (old name: `bench decode`): decode a test set with one of our decoders on a Moses
model, check it against the Moses oracle's outputs and the independent derivation scorer, and time it (model loading
excluded); with `--peers`, the live peers named (entries of config/peers.yaml or a --peers-file: Moses2, Moses v1, a
user's own decoder) decode the same input with the same model and settings, their outputs checked against ours (the
identity rule), and every system (ours included) is timed as a process in every repeat of the harness' repeat
protocol (loading subtracted alike: `harness.loading_subtracted`). moses_training's timed decode on the trained
model is this verb too (its rule writes results/raw/moses_training/)."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..ioutil import words as split_words

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `moses_decode` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("moses_decode", ("decode",),
         help="decode + check against Moses' outputs + time (rows: one per timed repeat, one quality row)",
         description="A correctness pass (n-best with segmentation, every entry rescored by the independent "
                     "derivation scorer; 1-best compared with each --oracle run: identical lines, model score ours >= "
                     "theirs - 1e-3, BLEU), then --repeats timed passes without n-best (as the oracle's quiet timings), "
                     "each checked to give the same 1-best.",
         settings=(
             arg("-f", "--config", required=True, help="moses.ini"),
             arg("--search", choices=["normal", "cube"], default="normal"),
             arg("-s", "--stack-size", type=int, default=200, config=True),
             arg("--pop-limit", type=int, default=1000, help="cube pruning's pop limit"),
             arg("--input", required=True, help="source sentences"),
             arg("--reference", required=True, help="reference translations (for BLEU)"),
             arg("--oracle", nargs="*", default=[], metavar="PREFIX",
                 help="reference runs: PREFIX.1best and PREFIX.1best-score (e.g. the oracle's m2-normal200)"),
             arg("--sentences", type=int, default=0, help="decode only the first N lines (0 = all)", config=True),
             arg("--nbest", type=int, default=10, help="n-best size of the correctness pass"),
             protocol(repeats=1),  # timed passes
             arg("--outputs", required=True, help="folder for the correctness pass' 1-best, scores, n-best"),
             arg("--peers", nargs="*", default=[], metavar="NAME[,NAME...]",
                 help="live peers, entries of config/peers.yaml or a --peers-file (moses2, moses: `make moses`; "
                      "a user's own decoder: one entry): decode the same input with the same model and search "
                      "settings, check their 1-best lines against ours (the identity rule), and time each beside "
                      "ours as a process in every repeat (alternating order; loading excluded alike: a run on the "
                      "first line only is subtracted). A peer that is not built gets a row saying so"),
             arg("--peers-file", action="append", default=[], metavar="YAML",
                 help="more peer entries (config/peers.yaml's format; an entry of the same name replaces its)"),
             arg("--peer-threads", type=int, default=1, help="threads of every process-timed system (ours: 0 = "
                                                             "the single-threaded path when 1)"),
             arg("--out", required=True, help="JSON-lines rows"),
             key("model", "trained",
                 help="trained: the workflow's own model, test books; oracle: the Moses oracle's model, dev books"),
             key("weights", [], grid=True, help="extra runs under these weights (common.smk: weight_runs)"),
             key("cube", type=dict, help="cube pruning's pop_limit and stack_size (the rule's --pop-limit, -s)"),
             key("peers", {}, type=dict, help="live peers per search (normal, cube: --peers)"),
             key("weights_peers", ["moses2"], grid=True, help="the live peers of the weights runs (both searches)"),
             key("oracle_peers", {}, type=dict,
                 help="live peers per search (normal, cube) of the oracle run, where the model is trained"),
             key("oracle_moses1_sentences", 0, type=int,
                 help="Moses v1 live on the oracle's model: its own run of ours and Moses v1 (normal search) on the "
                      "first N dev verses (0 = not run), a row of the oracle normal table"),
             key("oracle_sentences", 0, type=int,
                 help="the oracle run's first N dev verses (0 = all), where the model is trained"),
             key("oracle_repeats", 0, type=int,
                 help="the oracle run's (ours and live Moses2 on the oracle's model) least repeats (0 = `repeats`): "
                      "its headline rows rest on >= 5 (issue 43), the trained runs' keep `repeats`"),
         )),
)


if TYPE_CHECKING:
    from ..peers import Peer
    from .harness import Protocol


def main(args: argparse.Namespace) -> int:
    """`bench moses_decode` (options: VERBS above)."""
    import hashlib
    from pathlib import Path

    from .. import peers
    from ..decode.compare import bleu, compare, read_lines, read_scores
    from ..decode.derivation import DerivationScorer, parse_segmentation
    from ..decode.model import PhraseModel
    from ..decode.nbest import printed_tolerance
    from ..decode.cube import CubeDecoder
    from ..decode.normal import NormalDecoder, nbest_line
    from ..ioutil import atomic_open
    from .harness import Protocol, must_agree, rows as open_rows

    protocol = Protocol.from_args(args)
    chosen = (peers.select(args.peers, "moses_decode", peers.load(args.peers_file))  # bad names: before any work
              if args.peers or args.peers_file else [])
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
    words = sum(len(split_words(s)) for s in src)
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
    with open_rows("decode_" + args.search, args.out) as rows:
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
            must_agree(same, "a timed pass gave a different 1-best than the correctness pass")
            rows.emit(kind="timing", repeat=rep, **config, decode_seconds=round(secs, 6),
                      words_per_second=round(words / secs, 3) if secs else None, **counters)
            return secs * 1e9

        Sweep("moses_decode", protocol, rows).points(["ours"], time_point).run()  # smtbench.protocol
        if chosen:
            _peers(args, protocol, rows, config, src, refs, best, best_scores, chosen)
    return 0


def _peers(args: argparse.Namespace, protocol: Protocol, rows, config: dict, src: list[str], refs: list[str],
           best: list[str], best_scores: list[float], chosen: list[Peer]) -> None:
    """The peers ``chosen`` (smtbench.peers entries) on the same model and input: one checked run each, then timed
    process runs of every system (ours included, as a process) in every repeat of the repeat protocol (paired: the
    ratios ours/<peer> per repeat drive the adaptive stop)."""
    import sys
    import tempfile

    from ..decode import moses_run
    from ..decode.compare import bleu, peer_identity
    from .harness import Ratio, Task, loading_subtracted, must_agree

    pop = args.pop_limit if args.search == "cube" else None
    systems = [moses_run.our_decoder(args.config, args.search, args.stack_size, pop,
                                     threads=args.peer_threads if args.peer_threads > 1 else 0)]
    for peer in chosen:
        missing = peer.missing()
        if missing:  # a row saying so, never a silent skip
            rows.emit(kind="peer", system=peer.name, label=peer.label, **config, status=missing)
            continue
        systems.append(moses_run.peer_decoder(peer, args.config, args.search, args.stack_size, pop,
                                              threads=args.peer_threads))
    if len(systems) == 1:
        return
    first_words = len(split_words(src[0]))
    words = sum(len(split_words(s)) for s in src) - first_words
    with tempfile.TemporaryDirectory(prefix="smtbench-bench-decode-") as tmp:
        inp = f"{tmp}/input"
        with open(inp, "w", encoding="utf-8") as fh:
            fh.write("".join(s + "\n" for s in src))
        one = moses_run.first_line_file(inp, tmp)
        for dec in systems:
            r = moses_run.run(dec, inp)
            must_agree(len(r.lines) == len(src),
                       f"{dec.describe()}: {len(r.lines)} output lines for {len(src)} input lines")
            if r.scores is None:  # no scores: its text only, differing lines counted, unjudged
                same = sum(a == b for a, b in zip(best, r.lines))
                identity = {"ours_vs_identical": same, "ours_vs_differing": len(src) - same}
            else:  # the identity rule (decode.compare.peer_identity): a strict peer scoring above ours stops the run
                identity = peer_identity(dec.name, best, best_scores, r.lines, r.scores, digits=r.digits or 6,
                                         line_digits=r.line_digits,
                                         where=f"{dec.describe()} < {args.input}", strict=dec.strict).as_dict("ours_vs")
            built = {} if dec.name == "ours" else {"allocator": _allocator(dec.argv[0])}
            rows.emit(kind="peer", system=dec.name, label=dec.label, **config, status="ok", command=dec.describe(),
                      threads=args.peer_threads, bleu=round(bleu(r.lines, refs), 2), identity=
                      "scores" if r.scores is not None else "lines", **identity, **built)

        def task(dec) -> Task:
            def fn(rep: int) -> float:
                full, first, secs = loading_subtracted(
                    lambda path: moses_run.run(dec, path, keep_output=False, loading=path == one).wall_s, inp, one)
                rows.emit(kind="peer_timing", system=dec.name, repeat=rep, **config, threads=args.peer_threads,
                          position=rows.context.get("order_pos"), wall_seconds=round(full, 4),
                          first_line_seconds=round(first, 4), decode_seconds=round(secs, 4), timed_words=words,
                          words_per_second=round(words / secs, 3) if secs > 0 else None)
                return secs * 1e9
            return Task(dec.name, fn)

        ratios = [Ratio.speedup(f"ours_vs_{d.name}", "ours", d.name) for d in systems if d.name != "ours"]
        Sweep("moses_decode peers", protocol, rows, ratios=ratios).add(
            *[task(d) for d in systems], peers=[d.name for d in systems if d.name != "ours"]).run()


def _allocator(program: str) -> str:
    """The malloc a peer's program runs with, read from the binary (moses_peer.allocator_of), or why not."""
    from .. import moses_peer
    try:
        return moses_peer.allocator_of(program)
    except (ValueError, OSError):
        return "unknown (not an ELF executable)"
