"""`smtbench bench mokry_decoder` (old name: `bench pipeline`): Mokry 3.3 (Table 3.4, Fig 3.6), the pipeline-tolerant
decoder. Cube pruning with the LM scored in full at item creation (off, Moses2), lazily at pop (lazy), through the
automaton queue (queue, per queue size), or through it before the item queue (queue-exact, the thesis' future work),
interleaved in one run on one model (the harness' repeat protocol); the queue's outputs must equal lazy scoring's
(a mismatch fails the run)."""
from __future__ import annotations

import argparse

from ..ioutil import words as split_words


def main(args: argparse.Namespace) -> int:
    """`bench mokry_decoder` (options: commands/bench_mokry_decoder.py)."""
    import hashlib
    import statistics

    from ..benchutil import model_path, parse_int_list, require_range
    from ..decode.compare import bleu, read_lines
    from ..decode.cube import CubeDecoder
    from ..decode.ini import load_ini
    from ..decode.model import PhraseModel
    from .harness import Protocol, Ratio, progress, rows as open_rows, run_points

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
            elif outputs[pt] != list(zip(texts, scores)):
                raise RuntimeError(f"{pt}: repeat {rep} gave other outputs than repeat 0")
            if pt[0] == "queue" and ("lazy", 0) in outputs and outputs[pt] != outputs[("lazy", 0)]:
                raise RuntimeError(f"queue size {pt[1]}: outputs differ from lazy scoring (same pop order)")
            rows.emit(point=pt[0], queue_size=pt[1] or None, repeat=rep, pop_limit=args.pop_limit,
                      stack_size=args.stack_size, sentences=n, source_words=words, lm=lm_name,
                      lm_bytes=model.lm.nbytes, decode_seconds=round(secs, 6),
                      words_per_second=round(words / secs, 3) if secs else None, **quality[pt])
            return secs * 1e9

        # every point once per repeat (smtbench.protocol); headline: the best automaton queue against lazy scoring
        def best_queue(t) -> float | None:
            best = min((t[f"queue/{q}"] for q in queues if f"queue/{q}" in t), default=None)
            return t["lazy/0"] / best if best and "lazy/0" in t else None

        run_points(protocol, rows, points, time_point, key=lambda pt: f"{pt[0]}/{pt[1]}",
                   ratios=[Ratio("queue_vs_lazy", best_queue)], progress=bar, label="mokry_decoder")
    return 0
