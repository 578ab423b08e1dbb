"""`smtbench count`: instructions, data accesses, simulated cache misses and mispredicted branches per unit of fixed
named points under callgrind (issue 42; smtbench.counts), the gate against a baseline, and per-function diffs."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "count", help="callgrind counts per unit of fixed points (ours and KenLM's), the regression gate on them "
                      "(--check), and the functions that moved between two runs (--diff)")
    p.add_argument("--points", default="all", help="'all' or a comma list of points/groups (see smtbench.counts)")
    p.add_argument("--out", help="rows (JSONL, one per point, with machine, build flags and git sha)")
    p.add_argument("--csv", help="the counts per unit (point,system,kernel,unit,metric,per_unit,pair; pair: the other "
                                  "system's comparable point, counts.PAIRS): what --check reads")
    p.add_argument("--callgrind-dir", help="keep each point's callgrind file here (<point>.callgrind), for --diff")
    p.add_argument("--oracle", help="the Moses oracle folder (lm-en5.arpa.xz, dev.en) the LM points count "
                                    "(default: $SMTBENCH_SHARED/oracles/moses-bible-dev, else ../shared/...)")
    p.add_argument("--workdir", default="work/counts", help="KenLM's binary and ids of the peer point (kept)")
    p.add_argument("--check", metavar="CSV", help="gate: compare this --csv with --baseline; exit 1 with one line "
                                                  "per count that rose more than its tolerance")
    p.add_argument("--baseline", default="workflow/baselines/counts.csv")
    p.add_argument("--report", help="with --check: a markdown table of every count against the baseline")
    p.add_argument("--figure", help="with --check: a PNG of every count over its baseline")
    p.add_argument("--update", action="store_true", help="with --check: write CSV as the new baseline (keeps "
                                                         "tolerances)")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), help="the functions whose instructions moved most from A "
                   "to B (callgrind files, or two --callgrind-dir folders)")
    p.add_argument("--top", type=int, default=15, help="with --diff: functions listed per file")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .. import counts

    if args.diff:
        for line in counts.diff(*args.diff, top=args.top):
            print(line)
        return 0
    if args.check:
        if args.update:
            n = counts.update_baseline(args.check, args.baseline)
            print(f"count baseline written: {args.baseline} ({n} counts)")
            return 0
        v = counts.check(args.check, args.baseline)
        if args.report:
            counts.write_report(v, args.report, args.baseline)
        if args.figure:
            from ..report.regress import plot_counts

            plot_counts(v, args.figure)
        for line in v.notes:
            print(line)
        for line in v.regressions:
            print(line)
        print(f"counts: {len(v.regressions)} regression(s) against {args.baseline} ({len(v.table)} counts compared)")
        return 1 if v.regressions else 0
    if args.update:
        raise counts.CountError("--update goes with --check CSV")
    if not (args.out or args.csv):
        raise counts.CountError("count: name --out and/or --csv (or use --check / --diff)")
    from ..ioutil import check_distinct_outputs

    check_distinct_outputs({"--out": args.out, "--csv": args.csv, "--callgrind-dir": args.callgrind_dir})
    oracle = Path(args.oracle) if args.oracle else counts.default_oracle()
    results = counts.count(counts.select(args.points), oracle, Path(args.workdir),
                           Path(args.callgrind_dir) if args.callgrind_dir else None, progress=args.progress)
    counts.write_outputs(results, args.out, args.csv)
    for r in results:
        if r.get("not_built"):
            how = "Moses: make moses" if r["system"] in ("moses", "moses2") else "KenLM: make lmplz"
            print(f"{r['point']}: not built ({how})")
        else:
            per = ", ".join(f"{m} {r[m + '_per_unit']:.4g}" for m in counts.METRICS)
            print(f"{r['point']}: {r['units']} x {r['unit']}, per {r['unit']}: {per}")
    return 0
