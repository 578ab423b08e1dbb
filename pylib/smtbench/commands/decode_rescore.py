"""`smtbench decode rescore`: rescore segmentations with the independent derivation scorer and compare with the
feature values a decoder printed (ours or Moses'), to the precision Moses prints."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["decode"].add_parser(
        "rescore", help="rescore segmentations (independent scorer) against printed n-best feature values",
        description="Either --nbest with segmentation markup in each entry (our --nbest-segmentation), or "
                    "--segmentation (a 1-best with |i-j| markup, plain or Moses2-enriched) with --nbest whose "
                    "first entry per sentence is that 1-best (Moses2). Values agree when they differ by at most "
                    "one unit in the 6th significant digit. Prints one JSON object; exit 1 on any mismatch.")
    p.add_argument("-f", "--config", required=True, help="moses.ini")
    p.add_argument("--source", required=True, help="source sentences (one per line)")
    p.add_argument("--nbest", required=True, help="n-best list (plain, .gz or .xz)")
    p.add_argument("--segmentation", default=None, help="1-best with segmentation markup (plain, .gz or .xz)")
    p.add_argument("--out", default=None, help="write the JSON report here too")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..decode.derivation import DerivationScorer, parse_segmentation
    from ..decode.nbest import read_nbest
    from ..ioutil import printed_tolerance
    from ..ioutil import atomic_open, open_text

    with open_text(args.source) as fh:
        source = [line.rstrip("\n") for line in fh]
    with open_text(args.nbest) as fh:
        entries = list(read_nbest(fh, args.nbest))
    if not entries:
        raise ValueError(f"{args.nbest}: no n-best entries (an empty list checks nothing)")
    for e in entries:
        if not 0 <= e.sid < len(source):
            raise ValueError(f"{args.nbest}:{e.line}: sentence id {e.sid}, but {args.source} has {len(source)} "
                             f"line(s) (ids 0..{len(source) - 1})")
    scorer = DerivationScorer(args.config, source)  # the model loaded once the inputs are known to fit
    if args.segmentation:
        with open_text(args.segmentation) as fh:
            segs = [line.rstrip("\n") for line in fh]
        firsts = {}
        for e in entries:
            firsts.setdefault(e.sid, e)
        jobs = [(sid, seg, firsts.get(sid), f"{args.segmentation}:{sid + 1}") for sid, seg in enumerate(segs)]
    else:
        jobs = [(e.sid, e.text, e, f"{args.nbest}:{e.line}") for e in entries]
    checked = mismatched = values = 0
    worst = 0.0
    examples = []
    for sid, seg, entry, where in jobs:
        if entry is None:
            mismatched += 1
            examples.append(f"{where}: no n-best entry for sentence {sid}")
            continue
        scored = scorer.score(sid, parse_segmentation(seg))
        checked += 1
        bad = []
        pairs = [(name, i, v) for name, vs in scored.features.items() for i, v in enumerate(vs)]
        for name, i, ours in pairs:
            if name not in entry.features:
                if name == "UnknownWordPenalty0":
                    continue   # Moses2 leaves it out of the list (it is in the total)
                bad.append(f"{name} missing")
                continue
            theirs = entry.features[name][i]
            values += 1
            rel = abs(ours - theirs) / max(abs(theirs), 1e-9)
            worst = max(worst, rel if theirs else abs(ours))
            if abs(ours - theirs) > printed_tolerance(theirs):
                bad.append(f"{name}[{i}] ours {ours:.6g} printed {theirs:.6g}")
        values += 1
        if abs(scored.total - entry.total) > printed_tolerance(entry.total):
            bad.append(f"total ours {scored.total:.6g} printed {entry.total:.6g}")
        if bad:
            mismatched += 1
            if len(examples) < 20:
                examples.append(f"{where}: " + "; ".join(bad))
    report = {"nbest": args.nbest, "segmentation": args.segmentation, "checked": checked,
              "values_compared": values, "mismatched": mismatched, "worst_relative_difference": worst,
              "examples": examples}
    text = json.dumps(report)
    print(text)
    if args.out:
        with atomic_open(args.out) as fh:
            fh.write(text + "\n")
    return 1 if mismatched else 0
