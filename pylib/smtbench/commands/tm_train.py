"""`smtbench tm train`: a Moses phrase-based model (moses.ini) from a parallel corpus in one command."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    from ..tm.align import EFLOMAL_DEFAULTS, HEURISTICS
    from ..tm.train import CASING, STEPS
    p = groups["tm"].add_parser(
        "train", help="train a phrase-based model in one command, as Moses' train-model.perl: corpus cleaning, "
                      "alignment, extraction, scoring, reordering, LM, moses.ini (resumable)",
        description="Train a phrase-based model from PREFIX.F and PREFIX.E (line-parallel, one sentence a line) "
                    "into OUTDIR, as Moses' train-model.perl does: optional tokenization and casing, "
                    "clean-corpus-n.perl's length/ratio filter, eflomal word alignment in both directions and "
                    "symmetrization, phrase extraction, phrase scoring, the wbe-msd-bidirectional-fe reordering "
                    "table, a Kneser-Ney LM of the target side (or --lm), and OUTDIR/moses.ini. Resumable: every "
                    "output is atomic and a finished step (stamp in OUTDIR/.steps/) is not redone; a changed "
                    "option or input redoes that step and the ones after it.")
    p.add_argument("--corpus", required=True, metavar="PREFIX", help="the corpus: PREFIX.F and PREFIX.E")
    p.add_argument("--f", required=True, metavar="EXT", help="extension of the source (foreign) side, e.g. de")
    p.add_argument("--e", required=True, metavar="EXT", help="extension of the target side, e.g. en")
    p.add_argument("--outdir", required=True, metavar="DIR", help="where every output goes (train-model.perl's names)")
    p.add_argument("--step", default=None, metavar="STEP[,STEP]",
                   help=f"run only these steps (of {', '.join(STEPS)}; each needs the outputs of the steps "
                        "before it); default: all, skipping the finished ones")
    p.add_argument("--force", action="store_true", help="redo the steps even if finished")
    g = p.add_argument_group("corpus step (tokenization, casing, cleaning)")
    g.add_argument("--tokenize", action="store_true",
                   help="tokenize both sides with sacremoses (Moses' tokenizer.perl rules, escape=False)")
    g.add_argument("--f-lang", default=None, help="tokenizer language of the source side (default: its EXT)")
    g.add_argument("--e-lang", default=None, help="tokenizer language of the target side (default: its EXT)")
    g.add_argument("--casing", choices=CASING, default="keep",
                   help="keep the text's case, lowercase it, or truecase it (sacremoses' truecaser trained on "
                        "the corpus, model saved as OUTDIR/truecase-model.EXT)")
    g.add_argument("--min-length", type=int, default=1, help="clean-corpus-n.perl: drop pairs with a side shorter")
    g.add_argument("--max-length", type=int, default=80,
                   help="clean-corpus-n.perl: drop pairs with a side longer than this many words (0: no limit)")
    g.add_argument("--ratio", type=float, default=9.0,
                   help="clean-corpus-n.perl: drop pairs whose length ratio exceeds this (0: no limit)")
    g = p.add_argument_group("align step (eflomal + symmetrization)")
    g.add_argument("--alignment", choices=HEURISTICS, default="grow-diag-final-and",
                   help="symmetrization heuristic (train-model.perl --alignment)")
    g.add_argument("--eflomal-model", type=int, choices=(1, 2, 3), default=EFLOMAL_DEFAULTS["model"],
                   help="1 = IBM1, 2 = +HMM, 3 = +fertility")
    g.add_argument("--eflomal-iterations", type=int, default=None,
                   help="sampling iterations per model (default: eflomal's own choice from the corpus size)")
    g.add_argument("--eflomal-samplers", type=int, default=EFLOMAL_DEFAULTS["n_samplers"],
                   help="independent samplers")
    g.add_argument("--eflomal-null-prior", type=float, default=EFLOMAL_DEFAULTS["null_prior"],
                   help="prior probability of NULL alignment")
    g = p.add_argument_group("extract, score and reorder steps")
    g.add_argument("--max-phrase-length", type=int, default=7, help="longest phrase extracted (words)")
    g.add_argument("--smoothing", choices=["none", "kn"], default="none", help="phrase-table smoothing")
    g.add_argument("--threads", type=int, default=1, help="phrase-scoring threads")
    g.add_argument("--score-memory", default="256M", help="phrase-scoring sort buffer")
    g.add_argument("--no-reordering", dest="reordering", action="store_false",
                   help="no lexicalized reordering table (distance-based reordering only)")
    g.add_argument("--reordering-smoothing", type=float, default=0.5, help="additive smoothing per class")
    g = p.add_argument_group("lm step")
    g.add_argument("--lm", default=None, metavar="ARPA",
                   help="use this ARPA LM (its order read from its header) instead of estimating one")
    g.add_argument("--lm-order", type=int, default=5, help="order of the LM estimated on the target side")
    g.add_argument("--lm-memory", default="1G", help="counting memory of the LM estimation")
    g.add_argument("--lm-discount-fallback", action="store_true",
                   help="lmplz's --discount_fallback, for a target side too small for modified Kneser-Ney")
    g = p.add_argument_group("model step")
    g.add_argument("--model-dir", default=None, help="where moses.ini goes (default: OUTDIR)")
    g.add_argument("--distortion-limit", type=int, default=6, help="moses.ini [distortion-limit]")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tm.train import STEPS, Trainer, TrainError, TrainOptions, summary
    only = None
    if args.step is not None:
        only = [s.strip() for s in args.step.split(",") if s.strip()]
        if not only:
            raise TrainError(f"--step {args.step!r}: no step named (give one or more of {', '.join(STEPS)})")
        bad = [s for s in only if s not in STEPS]
        if bad:
            raise TrainError(f"--step {bad[0]}: unknown step (one of {', '.join(STEPS)})")
    opts = TrainOptions(
        corpus=args.corpus, f=args.f, e=args.e, outdir=args.outdir, tokenize=args.tokenize, f_lang=args.f_lang,
        e_lang=args.e_lang, casing=args.casing, min_length=args.min_length, max_length=args.max_length,
        ratio=args.ratio, alignment=args.alignment, eflomal_model=args.eflomal_model,
        eflomal_iterations=args.eflomal_iterations, eflomal_samplers=args.eflomal_samplers,
        eflomal_null_prior=args.eflomal_null_prior, max_phrase_length=args.max_phrase_length,
        smoothing=args.smoothing, threads=args.threads, score_memory=args.score_memory,
        reordering=args.reordering, reordering_smoothing=args.reordering_smoothing, lm=args.lm,
        lm_order=args.lm_order, lm_memory=args.lm_memory, lm_discount_fallback=args.lm_discount_fallback,
        model_dir=args.model_dir, distortion_limit=args.distortion_limit, progress=not args.quiet)
    trainer = Trainer(opts)
    rows = trainer.train(only, force=args.force)
    print(summary(rows, trainer))
    return 0
