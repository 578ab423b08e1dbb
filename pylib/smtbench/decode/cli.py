"""Arguments and the run loop every `smtbench decode <search>` verb shares (model, input, outputs, counters)."""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .model import PhraseModel


def add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--config", required=True, metavar="MOSES_INI",
                   help="moses.ini (as train-model.perl writes it; relative paths: cwd, then the ini's folder)")
    p.add_argument("--weight-overwrite", default=None, metavar="'NAME= w ...'",
                   help="replace weights by feature name, as Moses' -weight-overwrite")


def add_io_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--input", default="-", help="source text, one sentence per line (default: stdin)")
    p.add_argument("-o", "--output", default="-", help="1-best, one line per input line (default: stdout)")
    p.add_argument("--scores", default=None, help="also write each 1-best's model score, one per line")
    p.add_argument("--n-best", nargs=2, default=None, metavar=("FILE", "N"),
                   help="n-best list in Moses2's format (ini order, N entries, UnknownWordPenalty0 printed)")
    p.add_argument("--report-segmentation", "-t", action="store_true",
                   help="mark each target phrase with its source span: 'words |i-j|' (Moses -t)")
    p.add_argument("--nbest-segmentation", action="store_true",
                   help="put the |i-j| segmentation into each n-best entry's text (Moses' "
                        "-include-segmentation-in-n-best), so `decode rescore` can check every entry")
    p.add_argument("--counters", default=None,
                   help="write the JSON counters here too (always printed on stderr)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_thread_args(p: argparse.ArgumentParser) -> None:
    """--threads and its settings, the same for every search (csrc/pb/threads.c)."""
    p.add_argument("--threads", type=int, default=0,
                   help="decode on this many threads (csrc/pb/threads.c; output in input order, streamed, identical "
                        "to one thread's); 0 = the single-threaded path")
    p.add_argument("--pin", action="store_true", help="pin thread i to cpu --pin-offset + i * --pin-increment")
    p.add_argument("--pin-offset", type=int, default=0, help="Moses2's cpu-affinity-offset")
    p.add_argument("--pin-increment", type=int, default=1, help="Moses2's cpu-affinity-increment")
    p.add_argument("--pool", choices=["on", "off"], default="on",
                   help="with --threads: per-thread pools and hypothesis recyclers (on) or plain malloc/free (off)")


def check_threads(args: argparse.Namespace) -> None:
    if args.threads < 0:
        raise ValueError(f"--threads {args.threads}: must be >= 0")


def threaded(decoder, args: argparse.Namespace):
    """The decoder itself (--threads 0), or its search on --threads workers."""
    if not args.threads:
        return decoder
    from .threads import ThreadedDecoder
    return ThreadedDecoder(decoder, threads=args.threads, pin=args.pin, pin_offset=args.pin_offset,
                           pin_increment=args.pin_increment, pool=args.pool == "on")


def load_model(args: argparse.Namespace) -> PhraseModel:
    from .ini import parse_weight_overwrite
    from .model import PhraseModel
    overrides = parse_weight_overwrite(args.weight_overwrite) if args.weight_overwrite else None
    binary = getattr(args, "binary", None)
    return PhraseModel(args.config, overrides, binary=binary, cache=getattr(args, "cache", 0) if binary else 0)


def nbest_size(args: argparse.Namespace) -> int:
    if not args.n_best:
        return 0
    try:
        n = int(args.n_best[1])
    except ValueError:
        raise ValueError(f"--n-best {args.n_best[0]} {args.n_best[1]}: N must be an integer") from None
    if not 1 <= n <= 100_000:
        raise ValueError(f"--n-best N = {n}: must be in 1..100000")
    return n


def peak_rss_kb() -> int | None:
    """This process' peak resident set (VmHWM: of its own image, unlike ru_maxrss, which keeps the forking parent's
    peak across exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


#: Moses2's defaults (moses2/TypeDef.h) for what neither the command line nor the ini sets
SEARCH_DEFAULTS = {"stack_size": ("stack", 200), "beam_threshold": ("beam-threshold", 1e-5),
                   "pop_limit": ("cube-pruning-pop-limit", 1000)}


def ini_search_defaults(args: argparse.Namespace, config) -> None:
    """As Moses: the ini's [stack], [beam-threshold] and [cube-pruning-pop-limit] are the defaults, the command
    line overrides them, Moses2's defaults fill the rest."""
    from_ini = {"stack_size": config.stack_size, "beam_threshold": config.beam_threshold,
                "pop_limit": config.pop_limit}
    for attr, (_, default) in SEARCH_DEFAULTS.items():
        if hasattr(args, attr) and getattr(args, attr) is None:
            setattr(args, attr, from_ini[attr] if from_ini[attr] is not None else default)


def run_decoder(args: argparse.Namespace, make: Callable[[PhraseModel, int], object], extra: dict) -> int:
    """Load the model, build the decoder with ``make(model, nbest)``, decode, print counters on stderr."""
    from tqdm import tqdm

    from ..ioutil import atomic_open, check_distinct_outputs, check_outputs_not_inputs
    from ..progress import heartbeat
    from .search import check_sentence, input_lines, run

    nb = nbest_size(args)
    check_distinct_outputs({"-o": args.output, "--scores": args.scores,
                            "--n-best": args.n_best[0] if nb else None, "--counters": args.counters})
    check_outputs_not_inputs({"-o": args.output, "--scores": args.scores, "--n-best": args.n_best[0] if nb else None,
                              "--counters": args.counters}, {"--input": args.input, "--config": args.config})
    if args.input != "-":  # a file is checked whole first, so a bad line N never leaves lines 1..N-1 on stdout
        for lineno, line in enumerate(input_lines(args.input), 1):
            check_sentence(line, f"{args.input}:{lineno}")
    lines = input_lines(args.input)  # streamed: no whole-corpus buffer; a closed stdin refused before loading
    with heartbeat(f"loading {args.config}", on=not args.no_progress and sys.stderr.isatty()):
        model = load_model(args)
    ini_search_defaults(args, model.config)
    for k in ("stack_size", "beam_threshold", "pop_limit"):
        if k in extra:
            extra[k] = getattr(args, k)
    decoder = make(model, nb)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(atomic_open(args.output))
        scores = stack.enter_context(atomic_open(args.scores)) if args.scores else None
        nbest = stack.enter_context(atomic_open(args.n_best[0])) if nb else None
        bar = stack.enter_context(tqdm(unit="sent", file=sys.stderr,
                                       disable=args.no_progress or None))
        summary = run(decoder, lines, out, name=args.input if args.input != "-" else "<stdin>",
                      scores=scores, nbest=nbest, segmentation=args.report_segmentation, progress=bar,
                      nbest_segmentation=args.nbest_segmentation)
    report = {**extra, "load_seconds": round(model.stats.seconds, 3), "table_seconds": round(model.table_seconds, 4),
              "options": model.stats.options, "peak_rss_kb": peak_rss_kb(),
              **summary.as_dict()}
    text = json.dumps(report)
    print(text, file=sys.stderr)
    if args.counters:
        with atomic_open(args.counters) as fh:
            fh.write(text + "\n")
    return 0
