"""`smtbench report regime-reference`: the machine's reference regime from a run's rows (smtbench.protocol)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["report"].add_parser(
        "regime-reference",
        help="a regime reference file from benchmark rows: per model, the median working-set probe of the kept "
             "repeats (bench mokry_lm / glm_btree --regime-reference then retake repeats off it)")
    p.add_argument("--rows", nargs="+", required=True, help="rows files (.jsonl) of one machine")
    p.add_argument("--out", required=True, help="the reference file (JSON; - = standard output)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import shlex
    import sys

    from ..ioutil import output_or_stdout
    from ..protocol import make_reference

    ref = make_reference(args.rows, command="smtbench " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    with output_or_stdout(args.out) as fh:
        fh.write(json.dumps(ref, indent=1, sort_keys=True) + "\n")
    for name, e in ref["entries"].items():
        print(f"{name}: {e['ns']} ns ({e['repeats']} repeats)", file=sys.stderr)
    return 0
