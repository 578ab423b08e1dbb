"""The `smtbench` command line. Sub-commands live in smtbench/commands/*.py; each module defines
``register(groups)`` where ``groups`` maps a group name ('bench', 'lm', 'tm', 'top', ...) to an
argparse sub-parser collection, and sets ``func`` on each parser it adds."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from . import commands
from .errors import CliError

GROUPS = {
    "bench": "timing benchmarks (one JSON object per line)",
    "lm": "n-gram language models: estimate, sample, ppl",
    "tm": "translation models: align, extract, score",
    "decode": "phrase-based decoders",
    "report": "tables, figures and regression checks from benchmark rows",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="smtbench", description=__doc__.splitlines()[0])
    top = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups: dict[str, argparse._SubParsersAction] = {"top": top}
    for name, help_text in GROUPS.items():
        g = top.add_parser(name, help=help_text)
        groups[name] = g.add_subparsers(dest=f"{name}_command", required=True, metavar="SUBCOMMAND")
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{mod.name}").register(groups)
    # drop groups nobody registered into, so `--help` lists only what exists
    for name in GROUPS:
        if not groups[name].choices:
            top.choices.pop(name, None)
            top._choices_actions = [a for a in top._choices_actions if a.dest != name]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .ioutil import install_signal_cleanup
    from .native import NativeError

    install_signal_cleanup()
    try:
        rc = args.func(args)
    except (CliError, ValueError, MemoryError, FileNotFoundError, IsADirectoryError, NotADirectoryError,
            PermissionError, NativeError) as exc:
        print(f"smtbench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
