"""moses.ini loading: the oracle's ini, path resolution, and a clear file:line error for what is unsupported."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from smtbench.decode.ini import IniError, load_ini, parse_weight_overwrite

from conftest import ORACLE  # noqa: E402  (the shared folder as the workflow reads it: SMTBENCH_SHARED)
from toy_models import TOY_ARPA  # noqa: E402

INI = """\
[input-factors]
0
[mapping]
0 T 0
[distortion-limit]
6
[feature]
UnknownWordPenalty
WordPenalty
PhrasePenalty
PhraseDictionaryMemory name=TranslationModel0 num-features=4 path=pt.gz input-factor=0 output-factor=0 {extra}
LexicalReordering name=LexicalReordering0 num-features=6 type=wbe-msd-bidirectional-fe-allff input-factor=0 output-factor=0 path=rt
Distortion
KENLM name=LM0 factor=0 path=lm.arpa order=3
[weight]
UnknownWordPenalty0= 1
WordPenalty0= -1
PhrasePenalty0= 0.2
TranslationModel0= 0.2 0.2 0.2 0.2
LexicalReordering0= 0.3 0.3 0.3 0.3 0.3 0.3
Distortion0= 0.3
LM0= 0.5
"""


def _model(tmp: Path, extra: str = "", ini: str | None = None) -> Path:
    with gzip.open(tmp / "pt.gz", "wt") as fh:
        fh.write("a ||| b ||| 0.5 0.5 0.5 0.5 ||| 0-0 ||| 1 1 1\n")
    with gzip.open(tmp / "rt.gz", "wt") as fh:
        fh.write("a ||| b ||| 0.5 0.2 0.3 0.5 0.2 0.3\n")
    (tmp / "lm.arpa").write_text(TOY_ARPA)
    path = tmp / "moses.ini"
    path.write_text(ini if ini is not None else INI.format(extra=extra))
    return path


def test_loads_features_weights_and_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")  # relative paths fall back to the ini's directory
    cfg = load_ini(_model(tmp_path))
    assert cfg.names() == ["UnknownWordPenalty0", "WordPenalty0", "PhrasePenalty0", "TranslationModel0",
                           "LexicalReordering0", "Distortion0", "LM0"]
    assert cfg.distortion_limit == 6
    assert len(cfg.weight_vector()) == 15
    tm = cfg.feature("PhraseDictionaryMemory")
    assert tm.table_limit == 20 and tm.path == tmp_path / "pt.gz" and tm.line == 11
    assert cfg.feature("LexicalReordering").path == tmp_path / "rt.gz"  # extension tried
    assert cfg.feature("KENLM").order == 3


def test_cwd_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ini = _model(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "lm.arpa").write_text((tmp_path / "lm.arpa").read_text())
    monkeypatch.chdir(other)
    assert load_ini(ini).feature("KENLM").path == other / "lm.arpa"


def test_overrides(tmp_path: Path) -> None:
    cfg = load_ini(_model(tmp_path), parse_weight_overwrite("LM0= 0.7 Distortion0= 0"))
    assert cfg.feature("KENLM").weights == [0.7] and cfg.feature("Distortion").weights == [0.0]
    with pytest.raises(IniError, match="no such feature"):
        load_ini(_model(tmp_path), {"Nope0": [1.0]})


@pytest.mark.parametrize("edit, match", [
    (("Distortion\n", "Distortion\nSparseFoo name=x\n"), r"moses.ini:14: unsupported feature 'SparseFoo'"),
    (("output-factor=0 \n", "output-factor=1\n"), r"moses.ini:11: output-factor=1"),
    (("type=wbe-msd-bidirectional-fe-allff", "type=msd-fe"), r"moses.ini:12: LexicalReordering type='msd-fe'"),
    (("LM0= 0.5\n", "LM0= 0.5 0.1\n"), r"moses.ini:22: LM0 has 1 scores but 2 weights"),
    (("LM0= 0.5\n", ""), r"no \[weight\] line for LM0"),
    (("[distortion-limit]\n6", "[distortion-limit]\nsix"), r"moses.ini:6: \[distortion-limit\]"),
    (("[mapping]", "[nbest]\n1\n[mapping]"), r"moses.ini:3: unsupported section \[nbest\]"),
    (("path=lm.arpa", "path=missing.arpa"), r"moses.ini:14: file not found: missing.arpa"),
])
def test_errors_name_the_line(tmp_path: Path, edit: tuple[str, str], match: str) -> None:
    text = INI.format(extra="").replace(*edit)
    with pytest.raises(IniError, match=match):
        load_ini(_model(tmp_path, ini=text))


def test_kenlm_binary_refused(tmp_path: Path) -> None:
    ini = _model(tmp_path)
    (tmp_path / "lm.arpa").write_bytes(b"mmap lm http://kheafield.com/code format version 5\n\0\0")
    with pytest.raises(IniError, match="KenLM binary file; pass the ARPA"):
        load_ini(ini)


@pytest.mark.skipif(not (ORACLE / "moses.ini").exists(), reason="oracle not present")
def test_oracle_ini(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ORACLE)
    cfg = load_ini("moses.ini")
    assert cfg.feature("KENLM").order == 5
    assert cfg.feature("KENLM").path.name == "lm-en5.arpa.xz"
    assert cfg.feature("LexicalReordering").weights == [0.3] * 6
