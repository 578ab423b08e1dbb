"""`smtbench tune`: tune a moses.ini's weights on a dev set as Moses' mert-moses.pl does (MERT or k-best MIRA)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "tune", help="tune a moses.ini's weights on a dev set (mert-moses.pl's loop: MERT or k-best batch MIRA)",
        description="Decode the dev set into an n-best list with one of our decoders, merge it with the earlier "
                    "iterations' lists, optimise the weights (MERT: exact line search, random restarts; or k-best "
                    "batch MIRA), repeat until no weight moves by 1e-5. Everything after `--` is passed to "
                    "`smtbench decode <decoder>` (e.g. `-- --pop-limit 100 -s 100`). Progress per iteration on "
                    "stderr; resumable from --workdir; the tuned ini keeps the input's layout.")
    p.add_argument("-f", "--config", required=True, metavar="MOSES_INI", help="the model to tune")
    p.add_argument("--input", required=True, help="dev source, one sentence per line")
    p.add_argument("--reference", required=True, nargs="+", help="dev reference(s), line-aligned with --input")
    p.add_argument("--decoder", choices=["normal", "cube", "beam"], default="cube",
                   help="`smtbench decode` search used for the n-best lists (default cube)")
    p.add_argument("--out", required=True, help="the tuned moses.ini")
    p.add_argument("--optimizer", choices=["mert", "mira"], default="mert",
                   help="mert (Moses' mert) or mira (Moses' kbmira); default mert")
    p.add_argument("--seed", type=int, default=1, help="random restarts / MIRA's order (default 1)")
    p.add_argument("--sentences", type=int, default=0, help="tune on the first N dev sentences only (0 = all)")
    p.add_argument("--nbest", type=int, default=100, help="n-best size per iteration (mert-moses.pl: 100)")
    p.add_argument("--nbest-factor", type=int, default=20,
                   help="decode NBEST x FACTOR entries and keep the first NBEST distinct strings per sentence (Moses' "
                        "distinct n-best lists, its n-best-factor 20)")
    p.add_argument("--max-iterations", type=int, default=25, help="mert-moses.pl's default 25")
    p.add_argument("--random-restarts", type=int, default=20, help="MERT's random starting points (20)")
    p.add_argument("--mira-c", type=float, default=0.01, help="kbmira's C (0.01)")
    p.add_argument("--mira-epochs", type=int, default=60, help="kbmira's epochs (60)")
    p.add_argument("--return-best-dev", action="store_true",
                   help="write the weights of the iteration whose 1-best had the best dev BLEU (mert-moses.pl's "
                        "--return-best-dev) instead of the last optimiser's")
    p.add_argument("--summary", default=None, help="also write one JSON row per iteration here")
    p.add_argument("--workdir", default=None, help="per-iteration files (default: OUT's name + '.work')")
    p.add_argument("--no-progress", action="store_true", help="no decoder progress bars")
    p.add_argument("decoder_args", nargs=argparse.REMAINDER,
                   help="after `--`: options of `smtbench decode <decoder>` (not -f/--input/-o/--n-best)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from ..tune.loop import TuneOptions, decoder_passthrough, tune, write_ini

    from ..ioutil import check_distinct_outputs, resolve_output

    extra = decoder_passthrough(args.decoder_args)
    check_distinct_outputs({"--out": args.out, "--summary": args.summary,
                            "--workdir": args.workdir or f"{args.out}.work"})
    from ..ioutil import check_outputs_not_inputs
    check_outputs_not_inputs({"--out": args.out, "--summary": args.summary},
                             {"--input": args.input, "--reference": args.reference, "-f/--config": args.config})
    for path in (args.out, args.summary):  # a directory or a path below a file: refused before the first iteration
        if path and path != "-":
            resolve_output(path)
    opts = TuneOptions(decoder=args.decoder, decoder_args=extra,
                       optimizer=args.optimizer, nbest=args.nbest, nbest_factor=args.nbest_factor, seed=args.seed,
                       max_iterations=args.max_iterations, restarts=args.random_restarts, mira_c=args.mira_c,
                       mira_epochs=args.mira_epochs, return_best_dev=args.return_best_dev,
                       progress=not args.no_progress, sentences=args.sentences)
    workdir = args.workdir or f"{args.out}.work"
    final, history = tune(args.config, args.input, args.reference, workdir, opts)
    write_ini(args.config, final, args.out,
              note=f"Weights tuned by smtbench tune ({args.optimizer}, seed {args.seed}, {len(history)} iterations"
                   f"{', the best dev run' if args.return_best_dev else ''}) on {args.input}.")
    if args.summary:
        from dataclasses import asdict

        from ..ioutil import atomic_open
        from ..machine import facts, git_sha, row_fields

        sha = git_sha()
        machine = row_fields(facts(with_gpu=False))  # every row records the machine (decode_seconds are times)
        with atomic_open(args.summary) as fh:
            for h in history:
                fh.write(json.dumps({"experiment": "tune", **asdict(h), "seed": args.seed, "nbest": args.nbest,
                                     "nbest_factor": args.nbest_factor, "decoder": args.decoder,
                                     "decoder_args": " ".join(opts.decoder_args), "sentences": args.sentences,
                                     "git_sha": sha, **machine}) + "\n")
    summary = {"iterations": len(history), "converged": history[-1].converged,
               "dev_bleu": [round(h.dev_bleu, 2) for h in history], "weights": final, "workdir": workdir}
    print(json.dumps(summary), file=sys.stderr)
    return 0
