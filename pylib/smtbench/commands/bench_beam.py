"""`smtbench bench beam`: Moore & Quirk (2007) Figs 2-3 -- BLEU against decoding time and against hypotheses
evaluated for Pharaoh's beam search, + distortion-penalty estimation (de), + early pruning (de+ep)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["bench"].add_parser(
        "beam", help="Pharaoh / DE / DE+EP pruning-parameter sweep: BLEU, ms/word, hypotheses/word "
                     "(Moore & Quirk 2007, Figs 2-3)",
        description="Decodes the first --sentences lines at every setting (t-table threshold, beam threshold, "
                    "t-table limit, beam limit; early-pruning threshold = t-table threshold) chosen by --search: "
                    "'hill-climb' (the paper's: from the most generous setting, move to the one-step-tighter "
                    "neighbour of highest BLEU, ties to fewer hypotheses, until the tightest; chosen on BLEU and "
                    "hypotheses only) or 'grid' (every combination). Repeat 0 is the exploration pass, repeats "
                    "1.. decode every point again in alternating order; outputs must not change. Thresholds are "
                    "in sum-abs-normalised natural-log score units (see `smtbench decode beam --help`).")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True, help="reference translations (BLEU)")
    p.add_argument("--variants", default="pharaoh,de,de+ep")
    p.add_argument("--mode", choices=["paper", "moses"], default="paper")
    p.add_argument("--search", choices=["hill-climb", "grid"], default="hill-climb")
    p.add_argument("--thresholds", default="0.5,1,1.5,2,2.5", help="t-table and beam thresholds (the paper's)")
    p.add_argument("--limits", default=None,
                   help="t-table and beam limits (default: the paper's 5,10,15,20,25, those above the model's "
                        "table-limit left out: Moses' 20 when the ini sets none, as `tm model` writes it)")
    p.add_argument("--pharaoh-beam-limits", default="30,35,40,45,50,60,75,100",
                   help="further beam limits for the pharaoh baseline (the paper's)")
    p.add_argument("--peers", default="",
                   help="our other searches in the same passes (Moses mode comparisons): normal:S (normal stack "
                        "search -s S), cube:P (cube pruning, pop limit P, -s P), comma-separated")
    p.add_argument("--no-cross", action="store_true",
                   help="do not decode pharaoh at de's settings and de at de+ep's (the same-settings comparisons)")
    p.add_argument("--extra-beam-limits", default="",
                   help="further beam limits for every variant (e.g. beyond a model's table-limit, which caps --limits)")
    p.add_argument("--distortion-limit", type=int, default=None, help="default: the ini's")
    p.add_argument("--every", type=int, default=1,
                   help="take every K-th line (1, 1+K, ...: a subset spread over every book), before --sentences")
    p.add_argument("--sentences", type=int, default=0, help="first N lines (0 = all)")
    from ..protocol import Protocol
    Protocol.add_arguments(p, repeats=2)  # repeat 0 = the exploration pass
    p.add_argument("--out", required=True)
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


PAPER_LIMITS = "5,10,15,20,25"


def _floats(text: str, name: str) -> list[float]:
    import math
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{name} {text!r}: expected comma-separated numbers") from None
    if not vals or any(math.isnan(v) or v < 0 or v > 1e6 for v in vals):
        raise ValueError(f"{name} {text!r}: expected numbers in 0..1e6")
    return sorted(set(vals))


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..benchutil import RowWriter, model_path, parse_int_list, require_range
    from ..decode.beam import VARIANTS
    from ..decode.compare import read_lines
    from ..decode.model import PhraseModel
    from ..decode.moore_quirk import Grid, sweep
    from ..ioutil import atomic_open

    from ..protocol import Protocol

    protocol = Protocol.from_args(args)
    require_range("--sentences", args.sentences, 0, 10**7)
    require_range("--every", args.every, 1, 10**6)
    variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise ValueError(f"--variants {args.variants!r}: each one of {', '.join(VARIANTS)}")
    from ..decode.ini import load_ini
    table_limit = load_ini(args.config).feature("PhraseDictionaryMemory").table_limit  # before the slow load
    limits = sorted(set(parse_int_list(args.limits or PAPER_LIMITS, 1, 10**6, "--limits")))
    if args.limits is None and table_limit:
        limits = [x for x in limits if x <= table_limit] or [table_limit]
    if table_limit and max(limits) > table_limit:
        raise ValueError(f"--limits {args.limits}: {args.config} loads table-limit={table_limit} translations "
                         f"per source phrase; raise it to at least {max(limits)}")
    grid = Grid(_floats(args.thresholds, "--thresholds"), limits,
                sorted(set(parse_int_list(args.pharaoh_beam_limits, 1, 10**6, "--pharaoh-beam-limits"))),
                tuple(sorted(set(parse_int_list(args.extra_beam_limits, 1, 10**6, "--extra-beam-limits"))))
                if args.extra_beam_limits else ())
    src, refs = read_lines(args.input), read_lines(args.reference)
    if len(src) != len(refs):
        raise ValueError(f"{args.input}: {len(src)} lines, but {args.reference} has {len(refs)}")
    src, refs = src[::args.every], refs[::args.every]
    n = args.sentences or len(src)
    model = PhraseModel(args.config)
    weights = {f.name: f.weights for f in model.config.features}
    lm_order = next((int(f.args.get("order", 0)) for f in model.config.features if f.kind == "KENLM"), None)
    with atomic_open(args.out) as out, tqdm(disable=not args.progress, unit="point") as bar:
        rows = RowWriter("moore_quirk", out, fixed={"model": model_path(args.config), "input": model_path(args.input)})
        sweep(model, src[:n], refs[:n], variants, grid, args.search, args.mode, args.distortion_limit,
              protocol, lambda **r: rows.emit(weights=weights, lm_order=lm_order, every=args.every, **r), bar.update,
              cross=not args.no_cross, peers=[x for x in args.peers.split(",") if x], writer=rows)
    return 0
