"""moses.ini as Moses' ``train-model.perl`` writes it: the features and weights every decoder here loads.

Supported (anything else is an :class:`IniError` naming the ini line): ``[input-factors]`` 0, ``[mapping]`` ``0 T 0``,
``[distortion-limit]``, ``[stack]``/``[beam-threshold]``/``[pop-limit]`` style single-value sections, and the features
UnknownWordPenalty, WordPenalty, PhrasePenalty, PhraseDictionaryMemory (4 scores, ``table-limit`` default 20),
LexicalReordering ``wbe-msd-bidirectional-fe-allff`` (6 scores), Distortion and KENLM (an ARPA file; a KenLM binary
file is refused with a hint). ``[weight]`` gives each feature's weights (``Name= w1 w2 ...``).

Relative paths resolve as Moses resolves them (against the working directory), then against the ini's directory.
The reordering table's path is written without its extension by ``train-model.perl``: the name is tried as given,
then with ``.gz`` and ``.xz``.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence


class IniError(ValueError):
    """A moses.ini the decoders cannot load; the message names the file and line."""


#: feature class -> (number of scores, default name stem)
_KNOWN: dict[str, int] = {
    "UnknownWordPenalty": 1,
    "WordPenalty": 1,
    "PhrasePenalty": 1,
    "PhraseDictionaryMemory": 4,
    "LexicalReordering": 6,
    "Distortion": 1,
    "KENLM": 1,
}
_SUPPORTED_REORDERING = ("wbe-msd-bidirectional-fe-allff",)
#: keys each feature may carry besides name/num-features/path (accepted and ignored where Moses' defaults hold)
_FACTOR_KEYS = ("input-factor", "output-factor", "factor")
_LAZY_KEYS = ("tuneable", "lazyload", "verbose")
_ALLOWED = {
    "PhraseDictionaryMemory": {"table-limit", *_FACTOR_KEYS, *_LAZY_KEYS},
    "LexicalReordering": {"type", *_FACTOR_KEYS, *_LAZY_KEYS},
    "KENLM": {"order", "lazyken", *_FACTOR_KEYS, *_LAZY_KEYS},
}
INT_MAX = 2**31 - 1
#: the largest weight magnitude accepted: beyond it a weighted sum overflows to -inf on ordinary feature values
MAX_WEIGHT = 1e9
_SINGLE_VALUE = {
    "distortion-limit": int,
    "stack": int,
    "beam-threshold": float,
    "cube-pruning-pop-limit": int,
    "ttable-limit": int,
}


@dataclass
class Feature:
    kind: str  # the Moses class name, e.g. "PhraseDictionaryMemory"
    name: str  # the name in n-best lists, e.g. "TranslationModel0"
    num_features: int
    weights: list[float]
    path: Path | None
    args: dict[str, str]
    line: int  # the ini line that declared it
    table_limit: int | None = None
    order: int | None = None
    reordering_type: str | None = None


@dataclass
class MosesConfig:
    path: Path
    features: list[Feature]
    distortion_limit: int = 6
    stack_size: int | None = None
    beam_threshold: float | None = None
    pop_limit: int | None = None
    sections: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def feature(self, kind: str) -> Feature:
        """The one feature of a class (the decoders support one of each)."""
        found = [f for f in self.features if f.kind == kind]
        if len(found) != 1:
            raise IniError(f"{self.path}: expected exactly one {kind} feature, found {len(found)}")
        return found[0]

    def weight_vector(self) -> list[float]:
        """All weights in ini order (the order of n-best feature values)."""
        return [w for f in self.features for w in f.weights]

    def names(self) -> list[str]:
        return [f.name for f in self.features]


def _resolve(value: str, ini_dir: Path, where: str, *, extensions: Sequence[str] = ("",)) -> Path:
    raw = Path(os.path.expanduser(value))
    bases = [raw] if raw.is_absolute() else [Path.cwd() / raw, ini_dir / raw]
    for base in bases:
        for ext in extensions:
            candidate = Path(str(base) + ext)
            if candidate.is_file():
                return candidate
            if candidate.is_dir():
                raise IniError(f"{where}: {value} is a directory"
                               f"{'' if str(candidate) == value else f' ({candidate})'}, expected a file")
    tried = ", ".join(str(Path(str(b) + e)) for b in bases for e in extensions)
    raise IniError(f"{where}: file not found: {value} (tried {tried})")


def _is_kenlm_binary(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(64)
    return head.startswith(b"mmap lm http://kheafield.com/code")


def _parse_sections(path: Path) -> tuple[dict[str, list[tuple[int, str]]], dict[str, int]]:
    sections: dict[str, list[tuple[int, str]]] = {}
    headers: dict[str, int] = {}
    current: str | None = None
    from ..ioutil import read_lines
    try:
        text = read_lines(path)  # the one line rule: a BOM (Windows editors) is not content, \r only before \n
    except IsADirectoryError:
        raise IniError(f"{path}: is a directory, expected a moses.ini file") from None
    for lineno, raw in enumerate(text, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise IniError(f"{path}:{lineno}: malformed section header: {raw!r}")
            current = line[1:-1].strip()
            if current in sections:
                raise IniError(f"{path}:{lineno}: section [{current}] appears twice")
            sections[current] = []
            headers[current] = lineno
            continue
        if current is None:
            raise IniError(f"{path}:{lineno}: line outside any [section]: {raw!r}")
        sections[current].append((lineno, line))
    return sections, headers


def _feature_line(path: Path, lineno: int, line: str, counts: dict[str, int]) -> Feature:
    where = f"{path}:{lineno}"
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise IniError(f"{where}: {exc}") from None
    kind, rest = tokens[0], tokens[1:]
    if kind not in _KNOWN:
        raise IniError(f"{where}: unsupported feature {kind!r} (supported: {', '.join(_KNOWN)})")
    args: dict[str, str] = {}
    for tok in rest:
        if "=" not in tok:
            raise IniError(f"{where}: expected key=value, got {tok!r}")
        key, value = tok.split("=", 1)
        if key in args:
            raise IniError(f"{where}: {key} given twice")
        args[key] = value
    name = args.pop("name", None)
    if name is None:
        name = f"{kind}{counts.get(kind, 0)}"
        if kind == "PhraseDictionaryMemory":
            name = f"TranslationModel{counts.get(kind, 0)}"
        elif kind == "KENLM":
            name = f"LM{counts.get(kind, 0)}"
    counts[kind] = counts.get(kind, 0) + 1
    expected = _KNOWN[kind]
    nf = args.pop("num-features", str(expected))
    try:
        num = int(nf)
    except ValueError:
        raise IniError(f"{where}: num-features={nf!r} is not an integer") from None
    if num != expected:
        raise IniError(f"{where}: {kind} with num-features={num} is unsupported (expected {expected})")
    for key in _FACTOR_KEYS:
        if key in args and args[key] != "0":
            raise IniError(f"{where}: {key}={args[key]}: only factor 0 is supported")
    allowed = _ALLOWED.get(kind, set()) | {"path"}
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise IniError(f"{where}: {kind}: unsupported option(s) {', '.join(unknown)}")
    feat = Feature(kind=kind, name=name, num_features=num, weights=[], path=None, args=dict(args), line=lineno)
    ini_dir = path.parent
    if kind in ("PhraseDictionaryMemory", "LexicalReordering", "KENLM"):
        if "path" not in args:
            raise IniError(f"{where}: {kind} needs path=")
    if kind == "PhraseDictionaryMemory":
        feat.path = _resolve(args["path"], ini_dir, where)
        limit = args.get("table-limit", "20")
        try:
            feat.table_limit = int(limit)
        except ValueError:
            raise IniError(f"{where}: table-limit={limit!r} is not an integer") from None
        if not 0 <= feat.table_limit <= INT_MAX:
            raise IniError(f"{where}: table-limit={limit} must be in 0..{INT_MAX} (0 = no limit)")
    elif kind == "LexicalReordering":
        rtype = args.get("type")
        if rtype not in _SUPPORTED_REORDERING:
            raise IniError(f"{where}: LexicalReordering type={rtype!r} is unsupported "
                           f"(supported: {', '.join(_SUPPORTED_REORDERING)})")
        feat.reordering_type = rtype
        feat.path = _resolve(args["path"], ini_dir, where, extensions=("", ".gz", ".xz"))
    elif kind == "KENLM":
        feat.path = _resolve(args["path"], ini_dir, where)
        if _is_kenlm_binary(feat.path):
            raise IniError(f"{where}: {feat.path} is a KenLM binary file; pass the ARPA file it was built from")
        order = args.get("order")
        if order is not None:
            try:
                feat.order = int(order)
            except ValueError:
                raise IniError(f"{where}: order={order!r} is not an integer") from None
            if feat.order < 1:
                raise IniError(f"{where}: order={order} must be ≥ 1")
    return feat


def _weights(path: Path, lines: list[tuple[int, str]], features: list[Feature]) -> None:
    by_name = {f.name: f for f in features}
    seen: set[str] = set()
    for lineno, line in lines:
        where = f"{path}:{lineno}"
        if "=" not in line:
            raise IniError(f"{where}: expected 'Name= w1 w2 ...', got {line!r}")
        name, values = line.split("=", 1)
        name = name.strip()
        if name not in by_name:
            raise IniError(f"{where}: weights for {name!r}, which no [feature] line declares")
        if name in seen:
            raise IniError(f"{where}: weights for {name} given twice")
        seen.add(name)
        try:
            ws = [float(v) for v in values.split()]
        except ValueError:
            raise IniError(f"{where}: weights must be numbers: {values.strip()!r}") from None
        feat = by_name[name]
        if len(ws) != feat.num_features:
            raise IniError(f"{where}: {name} has {feat.num_features} scores but {len(ws)} weights")
        _check_weights(f"{where}: {name}", ws)
        feat.weights = ws
    missing = [f.name for f in features if not f.weights]
    if missing:
        raise IniError(f"{path}: no [weight] line for {', '.join(missing)}")


def _check_weights(where: str, ws: Sequence[float]) -> None:
    for w in ws:
        if not abs(w) <= MAX_WEIGHT:  # NaN fails too
            raise IniError(f"{where}= {' '.join(format(x, 'g') for x in ws)}: weights must be finite numbers within "
                           f"±{MAX_WEIGHT:g} (larger ones overflow every score to -inf)")


def apply_overrides(config: MosesConfig, overrides: Mapping[str, Sequence[float]]) -> None:
    """Replace weights by name, as Moses' ``-weight-overwrite "Name= w ..."`` does."""
    by_name = {f.name: f for f in config.features}
    for name, ws in overrides.items():
        if name not in by_name:
            raise IniError(f"weight override for {name!r}: no such feature (have {', '.join(by_name)})")
        feat = by_name[name]
        if len(ws) != feat.num_features:
            raise IniError(f"weight override for {name}: {feat.num_features} scores but {len(ws)} weights")
        _check_weights(f"weight override {name}", [float(w) for w in ws])
        feat.weights = [float(w) for w in ws]


def parse_weight_overwrite(text: str) -> dict[str, list[float]]:
    """Parse Moses' ``-weight-overwrite`` string: ``"LM0= 0.5 TranslationModel0= 0.2 0.2 0.2 0.2"``."""
    out: dict[str, list[float]] = {}
    name: str | None = None
    for tok in text.split():
        if tok.endswith("="):
            name = tok[:-1]
            out[name] = []
        elif name is None:
            raise IniError(f"weight override {text!r}: a value before any 'Name='")
        else:
            try:
                out[name].append(float(tok))
            except ValueError:
                raise IniError(f"weight override {text!r}: {tok!r} is not a number") from None
    return out


def load_ini(path: str | os.PathLike[str], overrides: Mapping[str, Sequence[float]] | None = None) -> MosesConfig:
    """Load a moses.ini; ``overrides`` replaces weights by feature name."""
    ini = Path(path)
    if not ini.exists():
        raise IniError(f"{ini}: no such file")
    sections, headers = _parse_sections(ini)
    for name, lines in sections.items():
        if name == "input-factors":
            for lineno, line in lines:
                if line != "0":
                    raise IniError(f"{ini}:{lineno}: input factor {line!r}: only factor 0 is supported")
        elif name == "mapping":
            for lineno, line in lines:
                if line.split() != ["0", "T", "0"]:
                    raise IniError(f"{ini}:{lineno}: mapping {line!r}: only '0 T 0' is supported")
        elif name in ("feature", "weight") or name in _SINGLE_VALUE:
            continue
        else:
            raise IniError(f"{ini}:{headers[name]}: unsupported section [{name}]")
    counts: dict[str, int] = {}
    features = [_feature_line(ini, lineno, line, counts) for lineno, line in sections.get("feature", [])]
    if not features:
        raise IniError(f"{ini}: no [feature] section (or it is empty)")
    names = [f.name for f in features]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise IniError(f"{ini}: feature name(s) declared twice: {', '.join(dup)}")
    _weights(ini, sections.get("weight", []), features)
    config = MosesConfig(path=ini, features=features, sections=sections)
    for key, conv in _SINGLE_VALUE.items():
        lines = sections.get(key)
        if lines is None:
            continue
        if len(lines) != 1:
            raise IniError(f"{ini}:{headers[key]}: [{key}] takes exactly one value")
        lineno, value = lines[0]
        try:
            parsed = conv(value)
        except ValueError:
            raise IniError(f"{ini}:{lineno}: [{key}] value {value!r} is not a {conv.__name__}") from None
        where = f"{ini}:{lineno}: [{key}] {value}"
        if key == "distortion-limit":
            config.distortion_limit = max(parsed, -1)  # negative: no limit (Moses)
        elif key == "stack":
            if not 1 <= parsed <= 1_000_000:
                raise IniError(f"{where}: must be in 1..1000000")
            config.stack_size = parsed
        elif key == "beam-threshold":
            if not 0 <= parsed <= 1:  # NaN fails too
                raise IniError(f"{where}: must be in [0, 1] (a probability ratio; 0 = no beam)")
            config.beam_threshold = parsed
        elif key == "cube-pruning-pop-limit":
            if not 1 <= parsed <= INT_MAX:
                raise IniError(f"{where}: must be in 1..{INT_MAX}")
            config.pop_limit = parsed
        elif key == "ttable-limit":
            if not 0 <= parsed <= INT_MAX:
                raise IniError(f"{where}: must be in 0..{INT_MAX} (0 = no limit)")
            for f in features:
                if f.kind == "PhraseDictionaryMemory" and "table-limit" not in f.args:
                    f.table_limit = parsed
    if overrides:
        apply_overrides(config, overrides)
    return config
