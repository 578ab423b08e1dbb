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
    return 0
