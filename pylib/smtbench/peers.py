"""Live peers as data: every system timed beside ours is one entry of ``config/peers.yaml`` (the way ann-benchmarks
lists its algorithms), so a user puts their own decoder beside ours and Moses' by adding one entry, in that file or
in a file of their own (``bench moses_decode --peers-file``). An entry says how the peer is found, its command, how
its output is read and how its lines are checked against ours; the file's header documents every key.

The experiments that read this registry: ``moses_decode`` (decoders: ``decode.moses_run.peer_decoder``) and
``moore_quirk`` (``--live-peers``: moses2, moses). KenLM's programs (``lm.kenlm_peer``) and Moses' scorer
(``moses_peer``, mediani_scoring) are still called by their experiments' own code, not through entries."""
from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

#: the file every run reads (a --peers-file adds to it; an entry of the same name replaces this file's)
DEFAULT_FILE = Path(__file__).resolve().parents[2] / "config" / "peers.yaml"

KEYS = ("label", "build", "cmd", "load", "output", "identity", "serves")
BUILDS = ("moses", "lmplz")          # build/moses/bin (make moses), build/lmplz/bin (make lmplz)
OUTPUTS = ("lines", "score-lines")   # stdout: 1-best lines; or 'SCORE HYP' lines (Moses' -output-hypo-score)
IDENTITIES = ("counted", "strict")   # strict: a line the peer scores above ours stops the run
#: what a command template may name; {scores}, {nbest}, {input}, {output} are files of the run (filled per run)
PLACEHOLDERS = ("ini", "ini_dir", "threads", "stack", "pop_limit", "search", "search_algorithm", "scores", "nbest",
                "input", "output")
RUN_FILES = ("scores", "nbest", "input", "output")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*\Z")


class PeersFileError(ValueError):
    """A peers file that cannot be used: one line naming the file, the line and the entry."""


@dataclass(frozen=True)
class Peer:
    """One entry of a peers file."""
    name: str
    label: str
    cmd: Mapping[str, str]           # search ("*": any) -> command template
    load: Mapping[str, str] | None   # the one-line loading run's template (None: ``cmd`` on the first line)
    build: str | None
    output: str
    strict: bool
    serves: tuple[str, ...]
    where: str                       # file:line of the entry

    @property
    def program(self) -> str:
        """The program as the entry names it: the first word of its command."""
        return shlex.split(next(iter(self.cmd.values())))[0]

    def path(self) -> Path | None:
        """Where the program is: under the build folder of ``build``; else an absolute path, a path relative to the
        current directory, or a name looked up on PATH. None: not built / not found (``missing`` says which)."""
        prog = self.program
        if self.build == "moses":
            from . import moses_peer
            p = moses_peer.bin_dir() / prog
        elif self.build == "lmplz":
            from .lm import kenlm_peer
            p = kenlm_peer.bin_dir() / prog
        elif "/" in prog:
            p = Path(os.path.abspath(prog))  # not resolved: a venv's python is a link that must stay one
        else:
            found = shutil.which(prog)
            return Path(found) if found else None
        return p if os.access(p, os.X_OK) else None

    def missing(self) -> str | None:
        """The status a table shows instead of a row where the program is not there (None: it is)."""
        if self.path() is not None:
            return None
        if self.build == "moses":
            from . import moses_peer
            return moses_peer.NOT_BUILT
        if self.build == "lmplz":
            return "not built (make lmplz)"
        return f"not found ({self.program}{'' if '/' in self.program else ' on PATH'})"

    def template(self, search: str, loading: bool = False) -> str:
        t = (self.load if loading and self.load else self.cmd)
        if search in t:
            return t[search]
        if "*" in t:
            return t["*"]
        raise ValueError(f"{self.where}: peer {self.name} has no command for search {search!r} "
                         f"(its cmd names {', '.join(sorted(t))})")

    def argv(self, search: str, values: Mapping[str, object], loading: bool = False) -> list[str]:
        """The command line for ``search`` with ``values`` filled in, the program resolved to its path; the run's
        files ({scores}, {nbest}, {input}, {output}) stay as written, for the run to fill."""
        path = self.path()
        if path is None:
            raise FileNotFoundError(f"{self.where}: peer {self.name}: {self.missing()}")
        filled = {**{k: "{" + k + "}" for k in RUN_FILES}, **{k: "" if v is None else str(v)
                                                               for k, v in values.items()}}
        words = [w.format_map(filled) for w in shlex.split(self.template(search, loading))]
        return [str(path)] + words[1:]

    def reads_scores(self) -> bool:
        """Whether the peer gives model scores (score-lines output, or a {scores} / {nbest} file)."""
        texts = list(self.cmd.values())
        return self.output == "score-lines" or any("{scores}" in t or "{nbest}" in t for t in texts)


def _fail(where: str, name: str, msg: str) -> PeersFileError:
    return PeersFileError(f"{where}: peer {name}: {msg}")


def _templates(where: str, name: str, key: str, value: object) -> dict[str, str]:
    """A command template (a string: every search) or one per search ({normal: ..., cube: ...})."""
    if isinstance(value, str):
        out = {"*": value}
    elif isinstance(value, dict) and value and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        out = dict(value)
    else:
        raise _fail(where, name, f"{key}: a command string, or one per search ({{normal: ..., cube: ...}})")
    dummy = {k: "x" for k in PLACEHOLDERS}
    for search, t in out.items():
        try:
            words = shlex.split(t)
        except ValueError as e:
            raise _fail(where, name, f"{key}: {e} in {t!r}") from None
        if not words:
            raise _fail(where, name, f"{key}: an empty command")
        for w in words:
            try:
                w.format_map(dummy)
            except KeyError as e:
                raise _fail(where, name, f"{key}: unknown placeholder {{{e.args[0]}}} (known: "
                                         f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)})") from None
            except (ValueError, IndexError) as e:
                raise _fail(where, name, f"{key}: {e} in {w!r}") from None
        if "{" in words[0]:
            raise _fail(where, name, f"{key}: the first word is the program, not a placeholder ({words[0]!r})")
    return out


def _peer(where: str, name: str, entry: object) -> Peer:
    if not isinstance(name, str) or not NAME.match(name):
        raise PeersFileError(f"{where}: peer name {name!r}: letters, digits, '_', '.', '-', starting with a letter")
    if name == "ours":
        raise _fail(where, name, "the name 'ours' is our own decoder's")
    if not isinstance(entry, dict):
        raise _fail(where, name, "an entry is a mapping with at least cmd: (e.g. {cmd: \"/path/dec -f {ini}\"})")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise _fail(where, name, f"unknown key(s) {', '.join(map(str, unknown))} (known: {', '.join(KEYS)})")
    if "cmd" not in entry:
        raise _fail(where, name, "cmd: missing (the command template)")
    cmd = _templates(where, name, "cmd", entry["cmd"])
    load = _templates(where, name, "load", entry["load"]) if entry.get("load") is not None else None
    programs = {shlex.split(t)[0] for t in list(cmd.values()) + list((load or {}).values())}
    if len(programs) > 1:
        raise _fail(where, name, f"every command runs the same program (found {', '.join(sorted(programs))})")
    build = entry.get("build")
    if build is not None and build not in BUILDS:
        raise _fail(where, name, f"build: {build!r}, one of {', '.join(BUILDS)} (absent: a path, or a name on PATH)")
    if build and "/" in next(iter(programs)):
        raise _fail(where, name, f"build: {build}: the program is a name in its build folder, not a path")
    output = entry.get("output", "lines")
    if output not in OUTPUTS:
        raise _fail(where, name, f"output: {output!r}, one of {', '.join(OUTPUTS)}")
    identity = entry.get("identity", "counted")
    if identity not in IDENTITIES:
        raise _fail(where, name, f"identity: {identity!r}, one of {', '.join(IDENTITIES)}")
    serves = entry.get("serves", ["moses_decode"])
    if not (isinstance(serves, list) and serves and all(isinstance(s, str) for s in serves)):
        raise _fail(where, name, "serves: a list of experiment names (e.g. [moses_decode])")
    label = entry.get("label", name)
    if not isinstance(label, str) or not label.strip() or "\n" in label:
        raise _fail(where, name, "label: one line of text")
    p = Peer(name=name, label=label, cmd=cmd, load=load, build=build, output=output, strict=identity == "strict",
             serves=tuple(serves), where=where)
    if p.strict and not p.reads_scores():
        raise _fail(where, name, "identity: strict needs the peer's model scores (output: score-lines, or "
                                 "{scores} / {nbest} in cmd)")
    return p


def read(path: str | os.PathLike) -> dict[str, Peer]:
    """The entries of one peers file (PeersFileError naming the file and line of what is wrong)."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise PeersFileError(f"{path}: cannot read the peers file ({e.strerror or e})") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise PeersFileError(f"{path}{line}: not YAML ({getattr(e, 'problem', None) or e})") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise PeersFileError(f"{path}:1: a peers file is a mapping of peer names to entries")
    lines = {k.value: k.start_mark.line + 1 for k, _ in node.value}
    return {name: _peer(f"{path}:{lines.get(name, 1)}", name, entry) for name, entry in data.items()}


def load(extra: Iterable[str | os.PathLike] = (), default: str | os.PathLike | None = DEFAULT_FILE) -> dict[str, Peer]:
    """The registry: ``config/peers.yaml``, then each ``extra`` file (an entry named as an earlier one replaces it)."""
    out: dict[str, Peer] = {}
    for path in ([default] if default else []) + list(extra):
        out.update(read(path))
    return out


def select(names: Iterable[str], experiment: str, registry: Mapping[str, Peer], option: str = "--peers") -> list[Peer]:
    """The entries ``names`` (comma-separated words too) for ``experiment``; ValueError naming the option where a
    name is not an entry or the entry does not serve the experiment."""
    out: list[Peer] = []
    for name in (n for word in names for n in word.split(",") if n):
        if name not in registry:
            raise ValueError(f"{option} {name}: no such peer (entries: {', '.join(sorted(registry)) or 'none'}; "
                             "declare it in config/peers.yaml or a --peers-file)")
        p = registry[name]
        if experiment not in p.serves:
            raise ValueError(f"{option} {name}: {p.where}: serves {', '.join(p.serves)}, not {experiment}")
        if p not in out:
            out.append(p)
    return out
