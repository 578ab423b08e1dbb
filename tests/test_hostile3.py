"""A third hostile round (issue 41's last acceptance line): inputs not in test_hostile*.py / test_lines.py, each
refused in one line (exit 2) before anything is written."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from smtbench.cli import main


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0, err
    return err


def _split(tmp: Path) -> tuple[Path, Path, Path]:
    src = tmp / "in.txt"
    src.write_text("".join(f"w{i} x\n" for i in range(6)), encoding="utf-8")
    assert main(["decode", "split", "-i", str(src), "--shards", "2", "--outdir", str(tmp / "sp")]) == 0
    p0, p1 = tmp / "p0", tmp / "p1"
    p0.write_bytes((tmp / "sp" / "shard0.txt").read_bytes())
    p1.write_bytes((tmp / "sp" / "shard1.txt").read_bytes())
    return tmp / "sp" / "shards.json", p0, p1


def test_merge_refuses_one_part_for_two_shards(tmp_path, capsys):
    man, p0, _ = _split(tmp_path)
    out = tmp_path / "m.out"
    assert main(["decode", "merge", "--manifest", str(man), "--outputs", str(p0), str(p0), "-o", str(out)]) == 2
    assert "given for two shards" in _err(capsys) and not out.exists()


@pytest.mark.parametrize("victim", ["manifest", "part"])
def test_merge_refuses_an_output_over_an_input(tmp_path, capsys, victim):
    man, p0, p1 = _split(tmp_path)
    target = man if victim == "manifest" else p1
    before = target.read_bytes()
    assert main(["decode", "merge", "--manifest", str(man), "--outputs", str(p0), str(p1), "-o", str(target)]) == 2
    assert "the same file as the input" in _err(capsys) and target.read_bytes() == before


def test_score_tmpdir_that_is_a_file(tmp_path, capsys):
    ext = tmp_path / "extract"
    ext.write_text("a ||| b ||| 0-0\n", encoding="utf-8")
    lex = tmp_path / "lex"
    lex.write_text("a b 1.0\n", encoding="utf-8")
    f = tmp_path / "afile"
    f.write_text("x\n", encoding="utf-8")
    out = tmp_path / "pt"
    assert main(["tm", "score", "--extract", str(ext), "--extract-inv", str(ext), "--lex-e", str(lex), "--lex-f",
                 str(lex), "--out", str(out), "--tmpdir", str(f)]) == 2
    assert "--tmpdir" in _err(capsys) and not out.exists()


@pytest.mark.parametrize("n", ["0", "-3"])
def test_extract_max_length_below_one(tmp_path, capsys, n):
    for name, text in (("s", "hola\n"), ("t", "hello\n"), ("a", "0-0\n")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    out = tmp_path / "ex"
    assert main(["tm", "extract", "--src", str(tmp_path / "s"), "--tgt", str(tmp_path / "t"), "--align",
                 str(tmp_path / "a"), "--outdir", str(out), "--max-length", n]) == 2
    assert "--max-length" in _err(capsys) and not out.exists()


def test_prepare_refuses_the_root_as_outdir(tmp_path, capsys):
    a, b = tmp_path / "a.x", tmp_path / "a.y"
    a.write_text("".join(f"w{i}\n" for i in range(6)), encoding="utf-8")
    b.write_text("".join(f"m{i}\n" for i in range(6)), encoding="utf-8")
    before = sorted(p.name for p in Path("/").iterdir())
    assert main(["data", "prepare", "--text", str(a), str(b), "--dev", "1", "--test", "1",
                 "--outdir", str(tmp_path / "..") + "/" + "../" * 20]) == 2
    assert "root" in _err(capsys) and sorted(p.name for p in Path("/").iterdir()) == before


@pytest.mark.parametrize("kw", [{"mira_c": math.nan}, {"mira_c": 0.0}, {"mira_c": math.inf}, {"mira_epochs": 0}])
def test_tune_mira_options_checked_before_decoding(kw):
    from smtbench.tune.loop import TuneError, TuneOptions
    with pytest.raises(TuneError, match="--mira-"):
        TuneOptions(**kw).check()


def test_tm_train_refuses_the_root_as_outdir(tmp_path, capsys):
    (tmp_path / "c.f").write_text("hola\nadios\n", encoding="utf-8")
    (tmp_path / "c.e").write_text("hello\nbye\n", encoding="utf-8")
    before = sorted(p.name for p in Path("/").iterdir())
    assert main(["tm", "train", "--corpus", str(tmp_path / "c"), "--f", "f", "--e", "e", "--outdir", "/",
                 "--lm-order", "2"]) == 2
    assert "--outdir /: the file system's root" in _err(capsys)
    assert sorted(p.name for p in Path("/").iterdir()) == before


def test_folder_lock_refuses_the_root():  # tune --workdir, data prepare --outdir and tm train's steps take it
    from smtbench.folderlock import folder_lock
    from smtbench.ioutil import OutputPathError
    with pytest.raises(OutputPathError, match="--workdir /tmp/..: the file system's root"):
        with folder_lock("/tmp/..", "tune", option="--workdir"):
            pass


@pytest.mark.parametrize("row", ["[1, 2]", "NaN", "\"text\"", "3"])
def test_report_rows_that_are_not_objects(tmp_path, capsys, row):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"experiment": "decode_normal", "kind": "x"}\n' + row + "\n", encoding="utf-8")
    table = tmp_path / "t.md"
    assert main(["report", "moses_decode", "--rows", str(rows), "--table", str(table)]) == 2
    assert f"{rows}:2: not a JSON row" in _err(capsys) and not table.exists()


@pytest.mark.parametrize("opt", [["--eflomal-iterations", "-1"], ["--eflomal-samplers", "0"], ["--threads", "-1"],
                                 ["--score-memory", "0"], ["--eflomal-null-prior", "1"]])
def test_tm_train_options_checked_before_the_first_step(tmp_path, capsys, opt):
    (tmp_path / "c.f").write_text("hola\n", encoding="utf-8")
    (tmp_path / "c.e").write_text("hello\n", encoding="utf-8")
    out = tmp_path / "model"
    assert main(["tm", "train", "--corpus", str(tmp_path / "c"), "--f", "f", "--e", "e", "--outdir", str(out),
                 *opt]) == 2
    assert opt[0] in _err(capsys) and not out.exists()  # refused before the corpus step wrote anything


def test_tune_eval_refuses_out_and_output_as_one_file(tmp_path, capsys):
    same = tmp_path / "row.json"
    assert main(["tune-eval", "-f", str(tmp_path / "moses.ini"), "--input", str(tmp_path / "in"), "--reference",
                 str(tmp_path / "ref"), "--out", str(same), "--output", str(same)]) == 2
    assert "--output" in _err(capsys) and not same.exists()  # refused before the config is read


def _cmd_with_output_over_input(tmp: Path, which: str) -> tuple[list[str], Path]:
    text = tmp / "in.txt"
    text.write_text("hola mundo\nel gato\n", encoding="utf-8")
    if which == "lm estimate":
        return ["lm", "estimate", "--text", str(text), "--arpa", str(text), "--order", "2"], text
    if which == "decode normal":
        ini = tmp / "moses.ini"
        ini.write_text("[feature]\n", encoding="utf-8")
        return ["decode", "normal", "--config", str(ini), "--input", str(text), "--output", str(text)], text
    return ["tm", "score", "--extract", str(text), "--lex-e", str(text), "--lex-f", str(text), "--out", str(text)], text


@pytest.mark.parametrize("which", ["lm estimate", "decode normal", "tm score"])
def test_an_output_naming_an_input_is_refused(tmp_path, capsys, which):
    args, victim = _cmd_with_output_over_input(tmp_path, which)
    before = victim.read_bytes()
    assert main(args) == 2
    assert "the same file as the input" in _err(capsys) and victim.read_bytes() == before


def test_prepare_refuses_an_outdir_whose_outputs_are_its_inputs(tmp_path, capsys):
    a, b = tmp_path / "train.es", tmp_path / "train.en"
    a.write_text("".join(f"w{i}\n" for i in range(6)), encoding="utf-8")
    b.write_text("".join(f"m{i}\n" for i in range(6)), encoding="utf-8")
    before = a.read_bytes(), b.read_bytes()
    assert main(["data", "prepare", "--text", str(a), str(b), "--f", "es", "--e", "en", "--dev", "1", "--test", "1",
                 "--outdir", str(tmp_path)]) == 2
    assert "the same file as the input --text" in _err(capsys) and (a.read_bytes(), b.read_bytes()) == before


def test_tune_refuses_out_over_its_reference(tmp_path, capsys):
    ref = tmp_path / "dev.en"
    ref.write_text("a\n", encoding="utf-8")
    assert main(["tune", "--config", str(tmp_path / "moses.ini"), "--input", str(tmp_path / "dev.es"),
                 "--reference", str(ref), "--out", str(ref), "--workdir", str(tmp_path / "w")]) == 2
    assert "the same file as the input --reference" in _err(capsys) and ref.read_text() == "a\n"


def test_tune_refuses_out_over_its_config(tmp_path, capsys):
    """The tuned moses.ini written over the model being tuned (-f) is refused before the first decode (Moses'
    mert-moses.pl never writes over its input ini either)."""
    ini = tmp_path / "moses.ini"
    ini.write_text("[weight]\nLM0= 0.5\n", encoding="utf-8")
    (tmp_path / "dev.es").write_text("a\n", encoding="utf-8")
    (tmp_path / "dev.en").write_text("a\n", encoding="utf-8")
    assert main(["tune", "--config", str(ini), "--input", str(tmp_path / "dev.es"), "--reference",
                 str(tmp_path / "dev.en"), "--out", str(ini), "--workdir", str(tmp_path / "w")]) == 2
    assert "the same file as the input -f/--config" in _err(capsys) and ini.read_text() == "[weight]\nLM0= 0.5\n"


def test_split_lines_with_a_count_names_the_option(tmp_path, capsys):
    a, b = tmp_path / "a.x", tmp_path / "a.y"
    a.write_text("".join(f"w{i}\n" for i in range(6)), encoding="utf-8")
    b.write_text("".join(f"m{i}\n" for i in range(6)), encoding="utf-8")
    assert main(["data", "prepare", "--text", str(a), str(b), "--split", "lines", "--dev", "2", "--test",
                 "1", "--outdir", str(tmp_path / "o")]) == 2
    assert "--dev 2: with --split lines, give a file of 1-based line numbers" in _err(capsys)


def test_report_given_rows_of_another_kind_is_one_line(tmp_path):
    """A report given rows that are not its bench's (a JSON object without the fields it reads, or rows of another
    experiment) is refused naming the file and line; before, a pandas KeyError/AttributeError traceback."""
    import subprocess
    import sys
    bad = tmp_path / "r.jsonl"
    bad.write_text('{"a": 1}\n')
    other = tmp_path / "o.jsonl"
    other.write_text('{"experiment": "mokry_lm", "x": 1}\n')
    for verb, rows, needle in (("moses-decode", bad, "r.jsonl:1: not a benchmark row"),
                               ("mokry-hash", bad, "r.jsonl:1: not a benchmark row"),
                               ("mokry-hash", other, "o.jsonl:1: a row of experiment 'mokry_lm'")):
        extra = ["--table", str(tmp_path / "t")] if verb == "moses-decode" else []
        r = subprocess.run([sys.executable, "-m", "smtbench.cli", "report", verb, "--rows", str(rows), *extra],
                           capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        assert needle in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().split("\n")) == 1, r.stderr
        assert not list(tmp_path.glob("t*")), "nothing written"
