"""Every command's help: complete descriptions, every default shown, `--version`."""
from __future__ import annotations

import argparse
import subprocess
import sys

from smtbench.cli import DESCRIPTION, all_parsers, build_parser


def test_top_help_and_version():
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert " ".join(DESCRIPTION.split()) in text and DESCRIPTION.endswith(".")
    for cmd in ("data", "tm", "decode", "postprocess", "bleu", "bench", "report"):
        assert f" {cmd} " in text, cmd
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("smtbench ") and len(r.stdout.split()) == 2


def test_every_subcommand_help_shows_its_defaults():
    parsers = list(all_parsers(build_parser()))
    assert len(parsers) > 40
    for path, p in parsers:
        text = p.format_help()   # raises on a broken help string (e.g. a bare %)
        flat = " ".join(text.split())
        if p.description:
            assert " ".join(p.description.split())[-1] in ".)", f"{' '.join(path)}: description cut short"
        for a in p._actions:
            if isinstance(a, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction,
                              argparse._StoreTrueAction, argparse._StoreFalseAction)):
                continue  # a flag's default is not giving it: no "(default: True)" (issue 41)
            if a.default is None or a.default is False or a.default is argparse.SUPPRESS or a.required:
                continue
            if not a.option_strings:
                continue
            shown = a.default if not isinstance(a.default, (list, tuple)) else a.default
            assert "default" in flat.lower(), f"smtbench {' '.join(path)}: no default shown at all"
            helptext = " ".join((a.help or "").split())
            assert ("default" in helptext.lower() or f"(default: {shown})" in flat), \
                f"smtbench {' '.join(path)} {a.option_strings[0]}: default {a.default!r} not shown"


def test_decode_beam_has_moses_pruning_defaults():
    p = dict(all_parsers(build_parser()))[("decode", "beam")]
    opts = {a.dest: a for a in p._actions}
    assert not any(opts[k].required for k in ("beam_threshold", "beam_limit", "ttable_threshold", "ttable_limit"))
    assert opts["beam_limit"].default == 200 and opts["ttable_threshold"].default == float("inf")


def test_one_command_parser_is_the_whole_parsers():
    """`smtbench <group> <command>` builds the parser of that command's module alone (cli.parser_for): for every
    command with a module of its own, the same help and the same parsed options as the whole parser; other lines
    (a group's help, the bench and report verbs, a misspelt command) get the whole parser."""
    from smtbench.cli import GROUPS, _command_modules, parser_for
    whole = dict(all_parsers(build_parser()))
    fast = 0
    for (path, p) in whole.items():
        if len(path) != 2 or f"{path[0]}_{path[1]}" not in _command_modules():
            continue
        one = parser_for(list(path))
        assert len(dict(all_parsers(one))) < len(whole)   # (the one module's parser)
        assert dict(all_parsers(one))[path].format_help() == p.format_help(), path
        fast += 1
    assert fast >= 15
    for line in (["tm", "--help"], ["tm"], ["bench", "glm_btree"], ["tm", "reorderx"], ["--version"]):
        assert len(dict(all_parsers(parser_for(line)))) == len(whole), line
    a = parser_for(["tm", "reorder", "--orientations", "x", "--out", "y"]).parse_args(
        ["tm", "reorder", "--orientations", "x", "--out", "y"])
    b = build_parser().parse_args(["tm", "reorder", "--orientations", "x", "--out", "y"])
    assert vars(a) == vars(b) and set(GROUPS) >= {"tm", "bench"}
