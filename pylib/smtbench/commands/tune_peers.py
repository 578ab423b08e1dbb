"""`smtbench tune-peers`: our MERT / k-best MIRA and Moses' mert / kbmira on the n-best lists of a tuning run."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["top"].add_parser(
        "tune-peers", help="our optimisers and Moses' mert/kbmira on the same n-best lists (one JSON row each)",
        description="Takes the n-best lists of a `smtbench tune` work directory (runs 1..N merged, as the N-th "
                    "iteration saw them), runs Moses' extractor on them (our statistics must equal its), then our "
                    "MERT and Moses' mert, our MIRA and Moses' kbmira, from the weights run N decoded with. Rows: "
                    "n-best BLEU of each weight vector on Moses' statistics, the program's own BLEU, the cosine.")
    p.add_argument("--workdir", required=True, help="a `smtbench tune` work directory")
    p.add_argument("--runs", type=int, default=0, help="merge runs 1..RUNS (default: every run there)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--random-restarts", type=int, default=20)
    p.add_argument("--mira-epochs", type=int, default=60)
    p.add_argument("--out", required=True, help="JSON lines")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    import tempfile
    from pathlib import Path

    from ..ioutil import atomic_open
    from ..machine import facts, git_sha, row_fields
    from ..tune.loop import weights_of_dict
    from ..tune.moses import compare

    work = Path(args.workdir)
    try:
        record = json.loads((work / "tune.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"--workdir {work}: no tune.json (not a `smtbench tune` work directory)") from None
    runs = args.runs or max((int(p.stem[3:]) for p in work.glob("run*.json") if p.stem[3:].isdigit()), default=0)
    if runs < 1 or not all((work / f"run{i}.nbest.gz").exists() for i in range(1, runs + 1)):
        raise ValueError(f"--workdir {work}: n-best lists of runs 1..{runs} are not all there")
    from .. import moses_peer

    missing = [p for p in ("extractor", "mert", "kbmira") if not moses_peer.available(p)]
    if missing:  # a table row that says so, not a failed workflow (make moses-test builds them)
        with atomic_open(args.out) as fh:
            for opt in ("mert", "mira"):
                fh.write(json.dumps({"experiment": "tune", "workdir": str(work), "optimizer": opt, "side": "moses",
                                     "program": f"{', '.join(missing)}: {moses_peer.NOT_BUILT}"}) + "\n")
        return 0
    layout = [tuple(x) for x in record["layout"]]
    start = weights_of_dict(json.loads((work / f"run{runs}.weights.json").read_text()), layout)
    with tempfile.TemporaryDirectory(prefix="smtbench-tune-peers-") as tmp:
        rows = compare([work / f"run{i}.nbest.gz" for i in range(1, runs + 1)], record["references"], layout,
                       start, seed=args.seed, workdir=tmp, restarts=args.random_restarts,
                       mira_epochs=args.mira_epochs)
    sha = git_sha()
    machine = row_fields(facts(with_gpu=False))
    with atomic_open(args.out) as fh:
        for r in rows:
            fh.write(json.dumps({"experiment": "tune", "workdir": str(work), "runs": runs, "seed": args.seed,
                                 "restarts": args.random_restarts, **r, "git_sha": sha, **machine}) + "\n")
    return 0
