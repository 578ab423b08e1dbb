"""The phrase-based model in C (csrc/pb/) loaded from a moses.ini: what every decoder here searches.

Feature values inside C use a fixed order (``INTERNAL``); :class:`PhraseModel` maps them to and from the
ini's order, which is the order of Moses2's n-best lists.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..native import ffi, lib, check
from ..tm.binarize import BinaryTableError, check_identity, header_reordering, provenance
from .ini import IniError, MosesConfig, load_ini

#: the C kernel's feature order (SB_PB_F_*): (ini class, index within the feature)
INTERNAL: list[tuple[str, int]] = (
    [("UnknownWordPenalty", 0), ("WordPenalty", 0), ("PhrasePenalty", 0)]
    + [("PhraseDictionaryMemory", k) for k in range(4)]
    + [("LexicalReordering", k) for k in range(6)]
    + [("Distortion", 0), ("KENLM", 0)]
)
assert len(INTERNAL) == lib.SB_PB_NFEAT
_REQUIRED = ("PhraseDictionaryMemory", "KENLM")
_OPTIONAL = ("UnknownWordPenalty", "WordPenalty", "PhrasePenalty", "LexicalReordering", "Distortion")


class ModelFormatError(ValueError):
    """A phrase or reordering table line the model cannot read; the message names file:line."""


@dataclass
class LoadStats:
    phrase_lines: int
    source_phrases: int
    options: int
    reordering_lines: int
    reordering_attached: int
    options_without_reordering: int
    max_phrase_length: int
    nbytes: int
    seconds: float


class PhraseModel:
    """Load a moses.ini's model: ``PhraseModel(config_or_path, overrides)``."""

    def __init__(self, config: MosesConfig | str | os.PathLike[str],
                 overrides: Mapping[str, Sequence[float]] | None = None, lm=None,
                 binary: str | os.PathLike[str] | None = None, cache: int = 0):
        """``binary``: a table from ``smtbench tm binarize`` instead of the ini's text tables (memory-mapped, looked
        up on demand; ``cache`` most frequent source phrases decoded at load); ``table_seconds``: its load time."""
        from ..lm.probing import ProbingLM

        self.config = config if isinstance(config, MosesConfig) else load_ini(config, overrides)
        if overrides and isinstance(config, MosesConfig):
            from .ini import apply_overrides
            apply_overrides(self.config, overrides)
        kinds = [f.kind for f in self.config.features]
        for k in _REQUIRED:
            if kinds.count(k) != 1:
                raise IniError(f"{self.config.path}: the decoders need exactly one {k} feature (found {kinds.count(k)})")
        for k in _OPTIONAL:
            if kinds.count(k) > 1:
                raise IniError(f"{self.config.path}: more than one {k} feature is unsupported")
        t0 = time.perf_counter()
        lm_feature = self.config.feature("KENLM")
        self.lm = lm if lm is not None else ProbingLM(lm_feature.path)
        if lm_feature.order is not None and lm_feature.order != self.lm.order:
            raise IniError(f"{self.config.path}:{lm_feature.line}: order={lm_feature.order} but "
                           f"{lm_feature.path} is a {self.lm.order}-gram model")
        tm = self.config.feature("PhraseDictionaryMemory")
        vocab = "\n".join(self.lm.model.vocab).encode("utf-8")
        out = ffi.new("sb_pb_model **")
        check(lib.sb_pb_new(self.lm._m, vocab, len(vocab), self._weights_c(), tm.table_limit or 0, out),
              f"phrase model for {self.config.path}")
        self._m = ffi.gc(out[0], lib.sb_pb_free)
        ro = [f for f in self.config.features if f.kind == "LexicalReordering"]
        t1 = time.perf_counter()
        if binary is not None:
            load_binary(self, Path(binary), cache, need_reordering=bool(ro))
        else:
            self._feed(tm.path, lib.sb_pb_feed_phrases)
            check(lib.sb_pb_finish_phrases(self._m), "phrase table")
            if ro:
                self._feed(ro[0].path, lib.sb_pb_feed_reordering)
            check(lib.sb_pb_finish(self._m), "phrase model")
        self.table_seconds = time.perf_counter() - t1
        c = ffi.new("uint64_t[8]")
        lib.sb_pb_counts(self._m, c)
        self.stats = LoadStats(*(int(c[i]) for i in range(8)), seconds=time.perf_counter() - t0)

    def _feed(self, path: Path, fn) -> None:
        from ..tm.tables import feed
        feed(Path(path), lambda buf, first: fn(self._m, buf, len(buf), first),
             lambda: (int(lib.sb_pb_error_line(self._m)), ffi.string(lib.sb_pb_error_message(self._m)).decode()),
             ModelFormatError)

    # ---- weights and feature order
    def _weights_c(self):
        return ffi.new("double[]", self.internal_weights())

    def internal_weights(self) -> list[float]:
        by_kind = {f.kind: f for f in self.config.features}
        return [by_kind[k].weights[i] if k in by_kind else 0.0 for k, i in INTERNAL]

    def to_ini_order(self, internal: Sequence[float]) -> list[tuple[str, list[float]]]:
        """Internal feature values -> [(feature name, values)] in ini order."""
        idx = {key: n for n, key in enumerate(INTERNAL)}
        return [(f.name, [float(internal[idx[(f.kind, k)]]) for k in range(f.num_features)])
                for f in self.config.features]

    @property
    def order(self) -> int:
        return self.lm.order


def load_binary(model: PhraseModel, path: Path, cache: int, need_reordering: bool) -> None:
    """Attach a binarized table (``smtbench tm binarize``) to a model just created by sb_pb_new, instead of feeding
    the text tables; checked against the ini's tables (provenance) and its reordering feature."""
    if cache < 0:
        raise ValueError(f"--cache {cache}: must be >= 0")
    if path.is_dir():
        raise BinaryTableError(f"{path}: is a directory, expected a binarized table (smtbench tm binarize)")
    if not path.is_file():
        raise BinaryTableError(f"{path}: no such binarized table (smtbench tm binarize)")
    cache = min(cache, 2**63)  # more than every source phrase: every one
    rc = lib.sb_pb_load_binary(model._m, str(path).encode(), cache)
    if rc == lib.SB_EFORMAT:
        raise BinaryTableError(f"{path}: {ffi.string(lib.sb_pb_error_message(model._m)).decode()}")
    check(rc, f"loading {path}")
    mode = header_reordering(path)
    if need_reordering and mode == "none":
        raise BinaryTableError(f"{path}: built without reordering scores but {model.config.path} has a "
                               f"LexicalReordering feature (tm binarize --reordering-table ...)")
    meta = provenance(path)
    cfg = model.config
    check_identity(path, meta, "phrase_table", Path(cfg.feature("PhraseDictionaryMemory").path), cfg.path)
    ro = [f for f in cfg.features if f.kind == "LexicalReordering"]
    if ro and mode != "none":
        check_identity(path, meta, "reordering_table", Path(ro[0].path), cfg.path)
