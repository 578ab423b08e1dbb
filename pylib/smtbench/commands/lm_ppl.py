"""`smtbench lm ppl`: perplexity of a text under an ARPA model (KenLM `query` conventions)."""
from __future__ import annotations

import argparse


def register(groups: dict[str, argparse._SubParsersAction]) -> None:
    p = groups["lm"].add_parser(
        "ppl", help="perplexity of a text (one JSON object; </s> counted, <s> not, as KenLM's query)")
    p.add_argument("--arpa", required=True, help="ARPA model (plain, .gz or .xz)")
    p.add_argument("--text", required=True, help="tokenized text, one sentence per line (plain, .gz or .xz)")
    p.add_argument("--backend", default="sequential",
                   help="scorer: sequential, automaton, or any backend registered in smtbench.lm.backends. An ARPA "
                        "whose n-gram lacks its context (w1..wn-1): every backend refuses it, as both KenLM "
                        "structures do (build_binary probing and trie). A missing suffix (w2..wn): probing and "
                        "automaton insert KenLM's blanks; btree refuses it")
    p.add_argument("--queue-size", type=int, default=0,
                   help="automaton queue size (1-16; default 8) for backends that take one")
    # gLM B-tree backends (btree, btree-cuda; smtbench.lm.btree)
    p.add_argument("--node-size", type=int, default=None,
                   help="B-tree node size K for the btree/btree-cuda backends (default 31)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from ..ioutil import open_text
    from ..lm import backends
    from ..lm.arpa import read_arpa

    import os

    known = backends.names()
    if args.backend not in known:
        raise ValueError(f"unknown --backend {args.backend!r}; known: {', '.join(known)}")
    if args.queue_size and args.backend != "automaton":
        raise ValueError(f"--queue-size applies to the automaton backend only (not {args.backend})")
    if args.node_size is not None and not args.backend.startswith("btree"):
        raise ValueError(f"--node-size applies to the btree backends only (not {args.backend})")
    for opt, path in (("--arpa", args.arpa), ("--text", args.text)):
        if os.path.isdir(path):
            raise ValueError(f"{opt} {path}: is a directory, expected a file")
    model = read_arpa(args.arpa)
    extra = {} if args.node_size is None else {"node_size": args.node_size}  # B-tree backends only
    scorer = backends.make(args.backend, model, queue_size=args.queue_size, **extra)
    with open_text(args.text) as fh:  # the line rule: invalid UTF-8 named as text:line
        text = backends.encode_lines(model, (line.rstrip("\n") for line in fh))
    if text.sentences == 0:
        raise ValueError(f"{args.text}: empty text (no line to score)")
    scores = scorer.score_stream(text.tokens)
    out = {"arpa": args.arpa, "text": args.text, "backend": args.backend,
           "queue_size": getattr(scorer, "queue_size", None), "order": model.order,
           **({"node_size": scorer.node_size} if hasattr(scorer, "node_size") else {}),
           **backends.perplexity_summary(scores, text)}
    print(json.dumps(out))
    return 0
