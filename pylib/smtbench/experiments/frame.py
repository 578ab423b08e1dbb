"""The experiment frame: the one shape every timed experiment fills, its settings declared once, and the parts built
from it (issue 39; CONTRIBUTING: Add an experiment).

Each experiment module (``experiments/<name>.py``) declares ``VERBS``: its ``smtbench bench`` verbs (one, or two for
mediani_scoring), each a :class:`Verb` holding the experiment's settings, every one declared once with its name, type,
default and help (:func:`arg`: a per-point command-line option; ``config=`` names the key of the experiment's config
block that sets it, ``grid=True`` when the config holds a list the command line takes comma-separated; :func:`key`:
a config key the workflow alone reads; :func:`protocol`: the repeat protocol's shared options, with the
experiment's default repeats), and ``counts``, the slot for its fixed points of ``smtbench count``. From it:

- the ``bench <name>`` parser (:func:`register`; no hand-written argparse per experiment), whose function imports
  the module and calls its ``main`` (or the verb's ``run``) only when the verb runs; every experiment's report
  module (``report/<name>.py``) declares its ``report <name>`` verb the same way;
- the config: the schema's block of each of the ten experiments it lists is checked against the declaration
  (tests/test_experiments.py: every key declared, defaults, types and choices equal); an experiment it does not list
  has its block checked and defaulted from the declaration (:func:`config_blocks`, called by the Snakefile).

The declaration is data: ``VERBS`` is read from the module's source (:func:`declared`) and evaluated with this
module's names only, so that building the command line imports no experiment (nor the C extension they load).

A run of an experiment is a :class:`Sweep` its ``main`` fills: its points (ours and each peer), each timed once per
call, checked through harness.must_agree and writing its rows, and the ratios that stop it; the protocol's one
repeat loop (smtbench.protocol.RepeatLoop) drives them.
"""
from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["Setting", "Verb", "Sweep", "arg", "key", "protocol", "declared", "register", "settings", "PROTOCOL_KEYS"]

#: the config keys the protocol marker stands for: the experiment's repeats and its own `protocol:` overrides
PROTOCOL_KEYS = ("repeats", "protocol")


@dataclass(frozen=True)
class Setting:
    """One setting of an experiment. ``flags``: its command-line option strings (none: the config alone sets it);
    ``kw``: argparse's keywords (type, default, help, choices, action, ...); ``config``: its key in the experiment's
    config block (None: the command line alone); ``grid``: the config holds a list, the command line its items
    comma-separated; ``kind``: arg | key | protocol."""
    flags: tuple[str, ...]
    kw: Mapping[str, Any] = field(default_factory=dict)
    config: str | None = None
    grid: bool = False
    kind: str = "arg"

    @property
    def dest(self) -> str:
        if "dest" in self.kw:
            return self.kw["dest"]
        if self.kind != "arg":
            return self.config or ""
        long = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return long.lstrip("-").replace("-", "_")

    @property
    def default(self) -> Any:
        """The value a run gets without the option (argparse's rule for flags)."""
        if self.kind == "protocol":
            return self.kw["repeats"]
        action = self.kw.get("action")
        if action == "store_true":
            return self.kw.get("default", False)
        if action == "store_false":
            return self.kw.get("default", True)
        return self.kw.get("default")

    @property
    def type(self) -> Any:
        t = self.kw.get("type")
        if t is None and self.kw.get("action") in ("store_true", "store_false"):
            return bool
        return t or str

    def add_to(self, p: argparse.ArgumentParser) -> None:
        if self.kind == "protocol":
            from ..protocol import Protocol
            Protocol.add_arguments(p, repeats=self.kw["repeats"])
        elif self.kind == "arg":
            p.add_argument(*self.flags, **self.kw)


def arg(*flags: str, config: str | bool | None = None, grid: bool = False, **kw: Any) -> Setting:
    """A per-point command-line option (argparse's ``add_argument`` keywords); ``config=True``: the config key is
    the option's name (underscores), a string: that key."""
    s = Setting(tuple(flags), dict(kw), None, grid)
    if config:
        s = Setting(s.flags, s.kw, s.dest if config is True else config, grid)
    return s


def key(name: str, default: Any = None, help: str = "", type: Any = str, grid: bool = False) -> Setting:
    """A key of the experiment's config block that the workflow reads (its rule file) and no option takes."""
    return Setting((), {"default": default, "help": help, "type": type}, name, grid, "key")


def protocol(repeats: int = 3) -> Setting:
    """The repeat protocol's shared options (smtbench.protocol; config keys ``repeats`` and ``protocol``)."""
    return Setting((), {"repeats": repeats}, "repeats", False, "protocol")


@dataclass(frozen=True)
class Verb:
    """One ``smtbench bench`` verb: its name (the experiment's), old names kept as aliases, help, description, its
    settings in option order, the module function it runs (``run(args) -> int``), and ``counts``: the slot for
    the fixed named points of the deterministic counts (``smtbench count``, smtbench.counts) that stand for it."""
    name: str
    aliases: tuple[str, ...] = ()
    help: str = ""
    description: str | None = None
    settings: tuple[Setting, ...] = ()
    run: str = "main"
    counts: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------- the declaration

#: the names a declaration may use (this module's and the types of its settings)
def counts_arg() -> Setting:
    """A report verb's `--counts` (issue 42): the counts table its headline table takes columns from."""
    return arg("--counts", help="counts table of `smtbench count --csv` (results/counts/counts.csv): adds the "
                                "instruction and LL-miss columns of the fixed count points, ours and the peer's")


_NAMES = {"Verb": Verb, "arg": arg, "counts_arg": counts_arg, "key": key, "protocol": protocol, "int": int, "float": float, "str": str,
          "bool": bool, "dict": dict, "list": list}


#: the package folder (smtbench/<group>) of each verb group's modules: `bench` verbs are declared by the experiment
#: modules, `report` verbs by the report modules (report/<name>.py: a new experiment's report needs no commands file)
PACKAGES = {"bench": "experiments", "report": "report"}


def _path(name: str, group: str = "bench") -> Path:
    return Path(__file__).resolve().parent.parent / PACKAGES[group] / f"{name}.py"


def declaring(group: str = "bench") -> list[str]:
    """The modules of a group's package that declare VERBS (a top-level ``VERBS = (`` line), in name order."""
    folder = _path("x", group).parent
    return sorted(p.stem for p in folder.glob("*.py") if "\nVERBS = (" in p.read_text())


def declared(experiment: str, group: str = "bench") -> tuple[Verb, ...]:
    """The ``VERBS`` of ``experiments/<experiment>.py`` (``report/<experiment>.py`` for the report group), from its
    source (no import: see the module docstring)."""
    path = _path(experiment, group)
    text = path.read_text()
    tree = None
    # Every command parses these at start (the bench and report verbs): the declaration's own lines, from its
    # "VERBS = (" to the first ")" line that ends it, parse in a tenth of the module's time; anything else (no such
    # line, a ")" line that does not end the statement) parses the whole module.
    at = text.find("\nVERBS = (")
    end = text.find("\n)\n", at + 1) if at >= 0 else -1
    if end >= 0:
        try:
            tree = ast.parse(text[at + 1:end + 3], str(path))
        except SyntaxError:
            tree = None
    if tree is None or len(tree.body) != 1:
        tree = ast.parse(text, str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "VERBS" for t in node.targets):
            code = compile(ast.Expression(node.value), str(path), "eval")
            verbs = eval(code, {"__builtins__": {}}, dict(_NAMES))  # noqa: S307 - the module's own literal data
            return tuple(verbs)
    raise ValueError(f"{path}: no VERBS declaration (experiments/frame.py)")


def settings(experiment: str) -> list[Setting]:
    """Every setting of an experiment, over all of its verbs."""
    return [s for v in declared(experiment) for s in v.settings]


# ----------------------------------------------------------------------------------------------- the config

def unlisted(schema: str) -> list[str]:
    """The experiments (modules declaring VERBS) that the config schema does not list: new experiments, whose
    config block :func:`config_blocks` checks against their declaration and whose rule file the Snakefile includes
    without a line of its own."""
    import yaml
    listed = set(yaml.safe_load(Path(schema).read_text())["properties"])
    return [name for name in declaring() if name not in listed]


def _config_default(s: Setting) -> Any:
    if s.kind == "arg" and s.grid and isinstance(s.default, str):  # the option's comma list -> the config's list
        items = [x.strip() for x in s.default.split(",") if x.strip()]
        return [int(x) if x.lstrip("-").isdigit() else x for x in items]
    return s.default


def config_blocks(config: dict, schema: str) -> dict:
    """The config blocks of the experiments the schema does not list (:func:`unlisted`), taken out of ``config``
    (so that the schema, which refuses unknown keys, validates the rest) and returned checked against each
    experiment's declaration: only declared keys (and ``protocol``, the repeat protocol's overrides), a list where
    the config holds a list, the declared type otherwise; every declared default filled in (as the schema's)."""
    import yaml
    types = {int: (int,), float: (int, float), bool: (bool,), str: (str,), dict: (dict,), list: (list,)}
    overrides = set(yaml.safe_load(Path(schema).read_text())["$defs"]["protocol_override"]["properties"])
    out = {}
    for name in unlisted(schema):
        if name not in config:
            continue
        block = dict(config.pop(name) or {})
        declared = {s.config: s for s in settings(name) if s.config}
        for k, v in block.items():
            s = declared.get(k)
            if s is None and not (k == PROTOCOL_KEYS[1] and PROTOCOL_KEYS[0] in declared and isinstance(v, dict)):
                raise ValueError(f"config {name}.{k}: not a setting of experiment {name} "
                                 f"(experiments/{name}.py declares {', '.join(sorted(declared))})")
            if s is None:
                if set(v) - overrides:
                    raise ValueError(f"config {name}.protocol: {', '.join(sorted(set(v) - overrides))}: not a key of "
                                     f"the repeat protocol ({', '.join(sorted(overrides))})")
                continue
            want = (list,) if s.grid else (int,) if s.kind == "protocol" else types.get(s.type, (object,))
            if not isinstance(v, want) or (isinstance(v, bool) and bool not in want):
                raise ValueError(f"config {name}.{k}: {v!r} is not of type {'list' if s.grid else want[0].__name__}")
        for k, s in declared.items():
            if k not in block and _config_default(s) is not None:
                block[k] = _config_default(s)
        if PROTOCOL_KEYS[0] in declared:
            block.setdefault(PROTOCOL_KEYS[1], {})
        out[name] = block
    return out


# ----------------------------------------------------------------------------------------------- one run

class Sweep:
    """One run of an experiment on the frame, which the experiment fills: its points -- :meth:`point` (one of ours)
    and :meth:`peer` (a peer program beside ours), each a function ``fn(repeat)`` that times the point once, checks
    its result (harness.must_agree: a ResultMismatch stops the run), writes its rows through ``rows`` and returns
    its time in ns (None: in no ratio) -- and the ratios that stop it. :meth:`run` hands every point to the
    protocol's one repeat loop (smtbench.protocol.RepeatLoop: paired repeats in alternating or shuffled order,
    adaptive stop, slow-spell retakes, ``focus``, the working-set ``regime`` probe) and logs its summary on stderr
    as ``<label>: ...``. ``rows`` None: the rows go nowhere (a pass whose rows the experiment writes itself)."""

    def __init__(self, label: str, protocol: Any, rows: Any = None, *, ratios: Sequence[Any] = (),
                 progress: Any = None, focus: Any = None, regime: Any = None):
        self.label, self.protocol, self.rows = label, protocol, rows
        self.ratios, self.progress, self.focus, self.regime = list(ratios), progress, focus, regime
        self.tasks: list[Any] = []
        self.peers: list[str] = []

    def point(self, key: str, fn: Callable[[int], float | None]) -> "Sweep":
        from ..protocol import Task
        self.tasks.append(Task(key, fn))
        return self

    def peer(self, key: str, fn: Callable[[int], float | None]) -> "Sweep":
        self.peers.append(key)
        return self.point(key, fn)

    def add(self, *tasks: Any, peers: Iterable[str] = ()) -> "Sweep":
        """Points built elsewhere (smtbench.protocol.Task: key, fn); ``peers``: the keys among them of peers."""
        self.tasks.extend(tasks)
        self.peers.extend(peers)
        return self

    def points(self, pts: Iterable[Any], fn: Callable[[int, Any], float | None],
               key: Callable[[Any], str] = str) -> "Sweep":
        """One point per item of ``pts``: ``fn(repeat, item)``."""
        for pt in pts:
            self.point(key(pt), (lambda pt: lambda rep: fn(rep, pt))(pt))
        return self

    @property
    def keys(self) -> set[str]:
        return {t.key for t in self.tasks}

    def run(self) -> Any:
        import sys

        from ..protocol import NullWriter, RepeatLoop, describe
        summary = RepeatLoop(self.protocol, self.rows if self.rows is not None else NullWriter(), self.tasks,
                             self.ratios, progress=self.progress, focus=self.focus, regime=self.regime).run()
        print(f"{self.label}: {describe(summary)}", file=sys.stderr)
        return summary


# ----------------------------------------------------------------------------------------------- the command line

def _runner(experiment: str, fn: str, group: str = "bench"):
    def run(args: argparse.Namespace) -> int:
        import importlib
        mod = importlib.import_module(f"{__package__.rpartition('.')[0]}.{PACKAGES[group]}.{experiment}")
        return getattr(mod, fn)(args)
    run.__qualname__ = run.__name__ = f"run_{experiment}"
    return run


def add_verbs(sub: argparse._SubParsersAction, experiment: str, group: str = "bench") -> list[argparse.ArgumentParser]:
    """``smtbench bench <experiment>`` (and its other verbs) from the experiment's declaration (``report``: from its
    report module's)."""
    from . import add_verb

    out = []
    for v in declared(experiment, group):
        kw = {"help": v.help} if v.help else {}
        if v.description:
            kw["description"] = v.description
        p = add_verb(sub, v.name, v.aliases, **kw)
        for s in v.settings:
            s.add_to(p)
        p.set_defaults(func=_runner(experiment, v.run, group))
        out.append(p)
    return out


def register(groups: dict[str, argparse._SubParsersAction], group: str = "bench") -> None:
    """The verbs of a group (bench: every experiment's; report: those the report modules declare), from the
    declarations; smtbench.cli calls this through commands/bench.py and commands/report_experiments.py."""
    for name in declaring(group):
        add_verbs(groups[group], name, group)
