"""The `smtbench` command line. Sub-commands live in smtbench/commands/*.py; each module defines
``register(groups)`` where ``groups`` maps a group name ('bench', 'lm', 'tm', 'top', ...) to an
argparse sub-parser collection, and sets ``func`` on each parser it adds."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from . import commands
from .errors import CliError

GROUPS = {
    "bench": "timing benchmarks (one JSON object per line)",
    "lm": "n-gram language models: estimate, sample, ppl",
    "tm": "translation models: train (all steps in one command), align, extract, score, reorder, model",
    "decode": "phrase-based decoders",
    "report": "tables, figures and regression checks from benchmark rows",
}


DESCRIPTION = ("smtbench: reproduce, and then beat, the efficiency results of phrase-based statistical machine "
               "translation (KenLM-style probing LMs, gLM B-trees, Pharaoh/Moses/Moses2 decoding, Mediani phrase "
               "scoring), and build a translation system from your own parallel text: `data prepare`, `tm train`, "
               "`decode normal`, `postprocess`, `bleu` (README: Using your own data). Each command's --help shows "
               "its options and their defaults.")


class HelpFormatter(argparse.HelpFormatter):
    """Shows every option's default, unless it is None/False or the help text already names it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        h = action.help or ""
        d = action.default
        if ("%(default)" in h or "default" in h.lower() or d is None or d is False or d is argparse.SUPPRESS
                or isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._StoreFalseAction,
                                       argparse._StoreTrueAction))  # a flag: its default is not giving it
                or not (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE))):
            return h
        return f"{h} (default: %(default)s)" if h else "default: %(default)s"


def _version() -> str:
    try:
        from importlib.metadata import version
        v = version("smtbench")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        v = "unknown"
    return f"smtbench {v}"


class _VersionAction(argparse._VersionAction):
    """--version, its text looked up when asked for (importlib.metadata costs every command ~40 ms at start)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        self.version = _version()
        super().__call__(parser, namespace, values, option_string)


def _command_modules() -> list[str]:
    """The modules of smtbench.commands, by name (pkgutil.iter_modules would import inspect: ~10 ms a start)."""
    import os
    names = set()
    for d in commands.__path__:
        for entry in os.scandir(d):
            stem, ext = os.path.splitext(entry.name)
            if entry.is_file() and ext == ".py" and stem.isidentifier() and stem != "__init__":
                names.add(stem)
    return sorted(names)


def all_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, parser) for the parser and every sub-command below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from all_parsers(sub, path + (name,))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``only``: the parser with that one command module registered (what
    :func:`parser_for` gives a `smtbench <group> <command>` line)."""
    parser = argparse.ArgumentParser(prog="smtbench", description=DESCRIPTION, formatter_class=HelpFormatter)
    parser.add_argument("--version", action=_VersionAction, version="smtbench")
    top = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups: dict[str, argparse._SubParsersAction] = {"top": top}
    for name, help_text in GROUPS.items():
        g = top.add_parser(name, help=help_text)
        groups[name] = g.add_subparsers(dest=f"{name}_command", required=True, metavar="SUBCOMMAND")
    for name in [only] if only else _command_modules():
        importlib.import_module(f"{commands.__name__}.{name}").register(groups)
    # drop groups nobody registered into, so `--help` lists only what exists
    for name in GROUPS:
        if not groups[name].choices:
            top.choices.pop(name, None)
            top._choices_actions = [a for a in top._choices_actions if a.dest != name]
    for _, p in all_parsers(parser):
        p.formatter_class = HelpFormatter
        for a in p._actions:   # argparse prints no default for an option without help text
            if a.help is None and a.option_strings and a.default not in (None, False, argparse.SUPPRESS) \
                    and not isinstance(a, (argparse._StoreFalseAction, argparse._StoreTrueAction)):
                a.help = "default: %(default)s"
    return parser


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for a command line: for `smtbench <group> <command> ...` whose module is commands/<group>_<command>.py
    and registers that command, a parser of that module alone (the same parser of that command: every command's
    module is imported and every bench and report verb declared at a whole build, ~0.1 s a start); else the whole."""
    if len(argv) >= 2 and argv[0] in GROUPS and f"{argv[0]}_{argv[1]}" in _command_modules():
        parser = build_parser(only=f"{argv[0]}_{argv[1]}")
        top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        group = top.choices.get(argv[0])
        sub = next((a for a in group._actions if isinstance(a, argparse._SubParsersAction)), None) if group else None
        if sub is not None and argv[1] in sub.choices:
            return parser
    return build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser_for(argv).parse_args(argv)
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
