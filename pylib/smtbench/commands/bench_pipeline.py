"""`smtbench bench pipeline`: Mokry 3.3 (Table 3.4, Fig 3.6) -- cube pruning with the LM scored in full at item
creation (off, Moses2), lazily at pop (lazy), through the automaton queue (queue, per queue size), or through it
before the item queue (queue-exact, the thesis' future work), interleaved in one run on one model; the queue's
outputs are checked to equal lazy scoring's in the run."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["bench"].add_parser("pipeline", help="pipeline-tolerant decoder: LM off/lazy/queue x queue sizes "
                                                    "(Mokry Table 3.4, Fig 3.6)")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--pop-limit", type=int, default=400)
    p.add_argument("-s", "--stack-size", type=int, default=400)
    p.add_argument("--queue-sizes", default="1-16")
    p.add_argument("--exact-queue-sizes", default="",
                   help="queue sizes of the queue-exact rows (the thesis' future work: items through the automaton "
                        "queue before the item queue; empty = none)")
    p.add_argument("--sentences", type=int, default=0, help="first N lines (0 = all)")
    from ..protocol import Protocol
    Protocol.add_arguments(p)
    p.add_argument("--lm", default=None, help="replace the ini's LM by this ARPA (larger models: timing only)")
    p.add_argument("--out", required=True)
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import hashlib
    import statistics

    from tqdm import tqdm

    from ..benchutil import RowWriter, model_path, parse_int_list, require_range
    from ..decode.compare import bleu, read_lines
    from ..decode.cube import CubeDecoder
    from ..decode.ini import load_ini
    from ..decode.model import PhraseModel
    from ..ioutil import atomic_open

    from ..protocol import Protocol, Ratio, run_points

    protocol = Protocol.from_args(args)
    require_range("--sentences", args.sentences, 0, 10**7)
    queues = parse_int_list(args.queue_sizes, 1, 16, "--queue-sizes")
    exact = parse_int_list(args.exact_queue_sizes, 1, 16, "--exact-queue-sizes") if args.exact_queue_sizes else []
    src, refs = read_lines(args.input), read_lines(args.reference)
    n = args.sentences or len(src)
    src, refs = src[:n], refs[:n]
    words = sum(len(s.split()) for s in src)
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
    with atomic_open(args.out) as out, tqdm(total=len(points) * args.repeats, disable=not args.progress) as bar:
        rows = RowWriter("mokry_decoder", out, fixed={"model": model_path(args.config), "input": model_path(args.input)})

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
                   ratios=[Ratio("queue_vs_lazy", best_queue)], progress=bar, label="pipeline")
    return 0
