"""`smtbench bench mokry_decoder` (old name: `bench pipeline`): Mokry 3.3 (Table 3.4, Fig 3.6), the pipeline-tolerant
decoder. Cube pruning with the LM scored in full at item creation (off, Moses2), lazily at pop (lazy), through the
automaton queue (queue, per queue size), or through it before the item queue (queue-exact, the thesis' future work),
interleaved in one run on one model (the harness' repeat protocol); the queue's outputs must equal lazy scoring's
(a mismatch fails the run)."""
from __future__ import annotations

import argparse

from ..ioutil import words as split_words

from .frame import Sweep, Verb, arg, key, protocol

#: the `bench` verb and every setting of the sweep, declared once (experiments/frame.py): the command line is built
#: from it, and the config schema's `mokry_decoder` block is checked against it (tests/test_experiments.py)
VERBS = (
    Verb("mokry_decoder", ("pipeline",),
         help="pipeline-tolerant decoder: LM off/lazy/queue x queue sizes (Mokry Table 3.4, Fig 3.6)",
         settings=(
             arg("-f", "--config", required=True, help="moses.ini"),
             arg("--input", required=True),
             arg("--reference", required=True),
             arg("--pop-limit", type=int, default=400, config=True),
             arg("-s", "--stack-size", type=int, default=400),
             arg("--queue-sizes", default="1-16", config=True),
             arg("--exact-queue-sizes", default="", config=True,
                 help="queue sizes of the queue-exact rows (the thesis' future work: items through the automaton "
                      "queue before the item queue; empty = none)"),
             arg("--sentences", type=int, default=0, config=True, help="first N lines (0 = all)"),
             protocol(repeats=3),
             arg("--lm", default=None, help="replace the ini's LM by this ARPA (larger models: timing only)"),
             arg("--out", required=True),
             arg("--progress", action="store_true"),
             key("model", "trained", help="trained: the workflow's own model, test books; oracle: the Moses "
                                          "oracle's model, dev books"),
             key("lms", [], grid=True, help="names in lm_models (--lm; timing only)"),
             key("weights", [], grid=True, help="extra runs under these weights (common.smk: weight_runs)"),
         )),
)


def main(args: argparse.Namespace) -> int:
    """`bench mokry_decoder` (options: VERBS above)."""
    import hashlib
    import statistics

    from ..benchutil import model_path, parse_int_list, require_range
    from ..decode.compare import bleu, read_lines
    from ..decode.cube import CubeDecoder
    from ..decode.ini import load_ini
    from ..decode.model import PhraseModel
    from .harness import Protocol, Ratio, must_agree, progress, rows as open_rows

    protocol = Protocol.from_args(args)
    require_range("--sentences", args.sentences, 0, 10**7)
    queues = parse_int_list(args.queue_sizes, 1, 16, "--queue-sizes")
    exact = parse_int_list(args.exact_queue_sizes, 1, 16, "--exact-queue-sizes") if args.exact_queue_sizes else []
    src, refs = read_lines(args.input), read_lines(args.reference)
    n = args.sentences or len(src)
    src, refs = src[:n], refs[:n]
    words = sum(len(split_words(s)) for s in src)
    config = load_ini(args.config)
    lm_name = "ini"
    if args.lm:
        from pathlib import Path
        config.feature("KENLM").path = Path(args.lm)
        config.feature("KENLM").order = None
        lm_name = Path(args.lm).name
    model = PhraseModel(config)
    points = [("off", 0), ("lazy", 0)] + [("queue", q) for q in queues] + [("queue-exact", q) for q in exact]
    decoders = {pt: CubeDecoder(model, pop_limit=args.pop_limit, stack_size=args.stack_size, lm_pipeline=pt[0],
                                queue_size=pt[1] or 8) for pt in points}
    quality: dict[tuple[str, int], dict] = {}
    outputs: dict[tuple[str, int], list] = {}
    fixed = {"model": model_path(args.config), "input": model_path(args.input)}
    with open_rows("mokry_decoder", args.out, fixed) as rows, progress(len(points) * args.repeats, args.progress, "mokry_decoder") as bar:

        def time_point(rep: int, pt: tuple[str, int]) -> float:
            dec = decoders[pt]
            secs, texts, scores = 0.0, [], []
            for line in src:
                tr = dec.translate(line)
                secs += tr.seconds
                texts.append(tr.best.text if tr.best else "")
                scores.append(tr.best.total if tr.best else 0.0)
            if pt not in quality:
                outputs[pt] = list(zip(texts, scores))
                quality[pt] = {"bleu": round(bleu(texts, refs), 2),
                               "mean_score": round(statistics.fmean(scores), 4) if scores else 0.0,
                               "output_sha": hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]}
            else:
                must_agree(outputs[pt] == list(zip(texts, scores)),
                           f"{pt}: repeat {rep} gave other outputs than repeat 0")
            if pt[0] == "queue" and ("lazy", 0) in outputs:
                must_agree(outputs[pt] == outputs[("lazy", 0)],
                           f"queue size {pt[1]}: outputs differ from lazy scoring (same pop order)")
            rows.emit(point=pt[0], queue_size=pt[1] or None, repeat=rep, pop_limit=args.pop_limit,
                      stack_size=args.stack_size, sentences=n, source_words=words, lm=lm_name,
                      lm_bytes=model.lm.nbytes, decode_seconds=round(secs, 6),
                      words_per_second=round(words / secs, 3) if secs else None, **quality[pt])
            return secs * 1e9

        # every point once per repeat (smtbench.protocol); headline: the best automaton queue against lazy scoring
        def best_queue(t) -> float | None:
            best = min((t[f"queue/{q}"] for q in queues if f"queue/{q}" in t), default=None)
            return t["lazy/0"] / best if best and "lazy/0" in t else None

        Sweep("mokry_decoder", protocol, rows, ratios=[Ratio("queue_vs_lazy", best_queue)], progress=bar).points(
            points, time_point, key=lambda pt: f"{pt[0]}/{pt[1]}").run()
    return 0
