"""Issue 41, nothing published before it is checked: colliding output names, decode merge's parts, a failed run
leaving the earlier good one, one run per output folder (an OS lock naming its holder), resuming only on the same
input content, no leftover links, the smaller option checks, and tune's outputs checked before its first
iteration. Tiny corpora and the toy tuning model: seconds."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from smtbench.cli import main

# its own LM, not TOY_ARPA: the words are _corpus's target side (x, y, z; "x y" is the 2-gram a test breaks)
TOY_LM = ("\\data\\\nngram 1=6\nngram 2=2\n\n\\1-grams:\n-1\t<s>\t-0.3\n-1\t</s>\n-0.5\tx\t-0.2\n-0.6\ty\n-0.7\tz\n"
          "-2\t<unk>\n\n\\2-grams:\n-0.3\t<s> x\n-0.4\tx y\n\n\\end\\\n")


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().count("\n") == 0, err
    return err


def _pair(tmp: Path, n: int = 6) -> tuple[Path, Path]:
    a, b = tmp / "a.x", tmp / "a.y"
    a.write_text("".join(f"Word{i} b{i} c.\n" for i in range(n)), encoding="utf-8")
    b.write_text("".join(f"Mot{i} d{i} e.\n" for i in range(n)), encoding="utf-8")
    return a, b


def _prepare(tmp: Path, out: Path, f: str = "x", e: str = "y", *extra: str) -> int:
    a, b = tmp / "a.x", tmp / "a.y"
    return main(["data", "prepare", "--text", str(a), str(b), "--f", f, "--e", e, "--dev", "1", "--test", "1",
                 "--outdir", str(out), *extra])


def _corpus(tmp: Path) -> Path:
    (tmp / "c.f").write_text("a b c\nb c\na c d\nd a\n", encoding="utf-8")
    (tmp / "c.e").write_text("x y z\ny z\nx z w\nw x\n", encoding="utf-8")
    (tmp / "lm.arpa").write_text(TOY_LM, encoding="utf-8")
    return tmp / "c"


def _train(tmp: Path, outdir: Path, *extra: str) -> int:
    return main(["tm", "train", "--corpus", str(tmp / "c"), "--f", "f", "--e", "e", "--outdir", str(outdir),
                 "--lm", str(tmp / "lm.arpa"), "--quiet", *extra])


# ---- finding 3: data prepare's output names

@pytest.mark.parametrize("f, e, clash", [("ref", "y", "train.ref"), ("raw.y", "y", "dev.raw.y"),
                                         ("x", "raw.x", "dev.raw.x")])
def test_prepare_refuses_colliding_output_names(tmp_path, capsys, f, e, clash) -> None:
    _pair(tmp_path)
    out = tmp_path / "o"
    assert _prepare(tmp_path, out, f, e) == 2
    err = _err(capsys)
    assert f"--f {f!r} --e {e!r}" in err and clash in err
    assert not out.exists()  # refused before anything was read or written
    assert _prepare(tmp_path, out, "x", "y") == 0  # distinct names: every output its own file
    assert (out / "train.ref").read_text() == "1\n2\n3\n4\n" and (out / "dev.raw.y").read_text() == "Mot4 d4 e.\n"


# ---- finding 4: decode merge

def _split(tmp: Path) -> str:
    (tmp / "in.txt").write_text("a b\nc\nd e f\ng\n", encoding="utf-8")
    assert main(["decode", "split", "-i", str(tmp / "in.txt"), "--shards", "2", "--outdir", str(tmp / "s")]) == 0
    return str(tmp / "s" / "shards.json")


def test_merge_refuses_missing_newline_and_missing_nbest_sentence_and_replaces_nothing(tmp_path, capsys) -> None:
    man = _split(tmp_path)
    o0, o1 = tmp_path / "o0", tmp_path / "o1"
    o0.write_text("A B\nC\n")
    o1.write_text("D E F\nG")  # cut short: no final newline (it would glue onto a following part)
    out = tmp_path / "merged"
    out.write_text("earlier\n")
    assert main(["decode", "merge", "--manifest", man, "--outputs", str(o0), str(o1), "-o", str(out)]) == 2
    assert "o1:2: the last line has no newline" in _err(capsys)
    o1.write_text("D E F\nG\n")
    o0.write_text("A B\nC")  # the first part too: its last line would become "CD E F"
    assert main(["decode", "merge", "--manifest", man, "--outputs", str(o0), str(o1), "-o", str(out)]) == 2
    assert "o0:2: the last line has no newline" in _err(capsys)
    o0.write_text("A B\nC\n")
    n0, n1 = tmp_path / "n0", tmp_path / "n1"
    n0.write_text("0 ||| A B ||| F= 1 ||| 1\n1 ||| C ||| F= 1 ||| 1\n")
    n1.write_text("1 ||| G ||| F= 1 ||| 1\n")  # sentence 0 of shard1 missing
    nb = tmp_path / "merged.nbest"
    args = ["decode", "merge", "--manifest", man, "--outputs", str(o0), str(o1), "-o", str(out),
            "--n-best-parts", str(n0), str(n1), "--n-best", str(nb)]
    assert main(args) == 2
    err = _err(capsys)
    assert "n1:1: no n-best entry for sentence 0 of shard1.txt" in err
    assert out.read_text() == "earlier\n" and not nb.exists()  # -o is not replaced before the n-best check
    n1.write_text("0 ||| D E F ||| F= 1 ||| 1\n")  # the last sentence missing
    assert main(args) == 2
    assert "n1: no n-best entry for sentence 1 of shard1.txt" in _err(capsys)
    assert out.read_text() == "earlier\n" and not nb.exists()
    n1.write_text("0 ||| D E F ||| F= 1 ||| 1\n1 ||| G ||| F= 1 ||| 1")  # the n-best part cut short
    assert main(args) == 2
    assert "n1:2: the last line has no newline" in _err(capsys)
    n1.write_text("0 ||| D E F ||| F= 1 ||| 1\n1 ||| G ||| F= 1 ||| 1\n")
    assert main(args) == 0
    assert out.read_text() == "A B\nC\nD E F\nG\n"
    assert [x.split(" ||| ")[0] for x in nb.read_text().splitlines()] == ["0", "1", "2", "3"]


# ---- check, then publish: a failed data prepare leaves the earlier run's folder

def test_failed_prepare_leaves_the_earlier_run(tmp_path, capsys, monkeypatch) -> None:
    from smtbench import data

    _pair(tmp_path)
    out = tmp_path / "o"
    assert _prepare(tmp_path, out) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "train.x" in before and "test.ref" in before
    _pair(tmp_path, 8)  # another corpus; the run fails after writing some of its files
    real, written = data._write_lines, []

    def failing(path, lines):
        if len(written) == 7:
            raise data.CorpusFormatError(f"{path}: failing on purpose")
        written.append(path)
        real(path, lines)

    monkeypatch.setattr(data, "_write_lines", failing)
    assert _prepare(tmp_path, out) == 2
    assert "failing on purpose" in _err(capsys) and len(written) == 7
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing replaced, no staging folder left
    monkeypatch.setattr(data, "_write_lines", real)
    (out / "test.raw.y").unlink()
    (out / "test.raw.y").mkdir()  # an output path that is a directory: refused before any file is replaced
    assert _prepare(tmp_path, out) == 2
    assert "test.raw.y: is a directory" in _err(capsys)
    assert (out / "train.x").read_bytes() == before["train.x"]


def test_tm_train_model_is_not_left_over_mixed_tables(tmp_path, capsys) -> None:
    _corpus(tmp_path)
    m = tmp_path / "m"
    assert _train(tmp_path, m) == 0 and (m / "moses.ini").exists()
    # a re-run that rewrites the tables but stops before the model step: no moses.ini over a mix of tables
    assert _train(tmp_path, m, "--max-phrase-length", "2", "--step", "extract,score") == 0
    assert not (m / "moses.ini").exists()
    assert _train(tmp_path, m, "--max-phrase-length", "2") == 0 and (m / "moses.ini").exists()


# ---- a lock per output folder

HOLDER = """
import sys, time
from smtbench.folderlock import folder_lock
with folder_lock(sys.argv[1], "data prepare"), folder_lock(sys.argv[2], "tune"), \\
        folder_lock(sys.argv[3], "tm train", part="corpus"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_second_run_on_a_folder_is_refused_naming_the_holder(tmp_path, capsys) -> None:
    import socket

    _pair(tmp_path)
    _corpus(tmp_path)
    from test_tune import _toy_tuning_model
    ini, src, ref = _toy_tuning_model(tmp_path)
    out, work, m = tmp_path / "o", tmp_path / "tuned.work", tmp_path / "m"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), str(work), str(m)], stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        who = f"host {socket.gethostname()} pid {holder.pid}"
        assert _prepare(tmp_path, out) == 2
        err = _err(capsys)
        assert "in use by another data prepare" in err and who in err
        assert main(["tune", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--out",
                     str(tmp_path / "tuned.ini"), "--workdir", str(work), "--no-progress"]) == 2
        err = _err(capsys)
        assert "in use by another tune" in err and who in err
        assert _train(tmp_path, m) == 2
        err = _err(capsys)
        assert "in use by another tm train (its corpus step)" in err and who in err
        assert not (m / ".steps").exists()
        # a run of other steps on that folder is not held up (the workflow runs score and reorder side by side)
        assert _train(tmp_path, m, "--step", "lm") == 0
    finally:
        holder.send_signal(signal.SIGKILL)  # the kernel releases its locks with it
        holder.wait()
    assert _prepare(tmp_path, out) == 0
    assert _train(tmp_path, m) == 0


# ---- resume checks the inputs' content

def test_tune_resume_restarts_when_an_input_changed_under_its_name(tmp_path, capsys) -> None:
    from test_tune import _toy_tuning_model
    ini, src, ref = _toy_tuning_model(tmp_path)
    out = tmp_path / "tuned.ini"
    args = ["tune", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--out", str(out),
            "--nbest", "5", "--max-iterations", "1", "--random-restarts", "2", "--no-progress", "--",
            "--pop-limit", "10"]
    assert main(args) == 0
    work = tmp_path / "tuned.ini.work"
    stamp = (work / "run1.json").stat().st_mtime_ns
    capsys.readouterr()
    os.utime(ref, ns=(time.time_ns(), time.time_ns() + 10**9))  # touched, same content: resumed
    assert main(args) == 0
    assert "restarting" not in capsys.readouterr().err and (work / "run1.json").stat().st_mtime_ns == stamp
    ref.write_text("y z\nz z y\ny\nz y y\n")  # same name, same size, other content
    assert main(args) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "restarting" in x)
    assert "restarting from run 1" in line and "--reference" in line
    assert (work / "run1.json").stat().st_mtime_ns != stamp
    import gzip
    with gzip.open(tmp_path / "pt.gz", "at") as fh:  # a table of the model changed: restarts too
        fh.write("b a ||| z y ||| 0.3 0.3 0.3 0.3 ||| 0-0 1-1 ||| 1 1 1\n")
    assert main(args) == 0
    assert "TranslationModel0 path" in next(x for x in capsys.readouterr().err.splitlines() if "restarting" in x)


def test_tm_train_resume_redoes_steps_when_the_corpus_changed_under_its_name(tmp_path, capsys) -> None:
    _corpus(tmp_path)
    m = tmp_path / "m"
    assert _train(tmp_path, m) == 0
    capsys.readouterr()
    assert _train(tmp_path, m) == 0
    assert "ran" not in capsys.readouterr().out.split("\n", 1)[1].split("model:")[0]
    (tmp_path / "c.e").write_text("x y z\ny z\nx z w\nw y\n", encoding="utf-8")  # same size, other content
    assert _train(tmp_path, m) == 0
    rows = {r.split()[0]: r.split()[1] for r in capsys.readouterr().out.splitlines()[1:8]}
    assert rows["corpus"] == rows["align"] == rows["model"] == "ran"
    assert (m / "corpus.clean.e").read_text().endswith("w y\n")


# ---- no hidden hard links left by tm train

def test_tm_train_leaves_no_temporary_links(tmp_path) -> None:
    _corpus(tmp_path)
    m = tmp_path / "m"
    (m).mkdir()
    (m / ".phrase-table.gz.tmp").write_text("a leftover of an older run")
    assert _train(tmp_path, m) == 0
    assert _train(tmp_path, m, "--model-dir", str(tmp_path / "model"), "--step", "model") == 0
    for d in (m, tmp_path / "model"):
        left = [p.name for p in d.iterdir() if p.name.endswith(".tmp")]
        assert left == [], (d, left)
    assert (tmp_path / "model" / "phrase-table.gz").read_bytes() == (m / "phrase-table.gz").read_bytes()
    assert (m / "phrase-table.gz").stat().st_nlink == 2  # the model folder's link, nothing hidden


# ---- the smaller checks of finding 6

def test_smaller_option_checks(tmp_path, capsys) -> None:
    _pair(tmp_path)
    _corpus(tmp_path)
    m = tmp_path / "m"
    assert _train(tmp_path, m, "--step", ",") == 2
    assert "--step ',': no step named" in _err(capsys)
    for ratio in ("nan", "inf", "0.5"):
        assert _train(tmp_path, m, "--ratio", ratio) == 2
        assert "--ratio" in _err(capsys)
    (tmp_path / "broken.arpa").write_text(TOY_LM.replace("-0.4\tx y", "-0.4\tx q"), encoding="utf-8")
    assert main(["tm", "train", "--corpus", str(tmp_path / "c"), "--f", "f", "--e", "e", "--outdir", str(m),
                 "--lm", str(tmp_path / "broken.arpa"), "--quiet"]) == 2
    assert "broken.arpa:" in _err(capsys)
    assert not m.exists()  # refused before the first step
    (tmp_path / "afile").write_text("")
    assert _train(tmp_path, m, "--model-dir", str(tmp_path / "afile" / "model")) == 2  # not after training
    assert "afile is not a directory" in _err(capsys) and not m.exists()
    tsv = tmp_path / "t.tsv"
    tsv.write_text("".join(f"{i}\tA{i} b.\tC{i} d.\n" for i in range(20)), encoding="utf-8")
    assert main(["data", "prepare", "--tsv", str(tsv), "--columns", "x,x,y", "--f", "x", "--e", "y", "--dev", "2",
                 "--test", "2", "--outdir", str(tmp_path / "o")]) == 2
    assert "--columns x,x,y: names column 'x' twice" in _err(capsys)
    assert _prepare(tmp_path, tmp_path / "o", "x", "y") == 0
    a, b = tmp_path / "a.x", tmp_path / "a.y"
    assert main(["data", "prepare", "--text", str(a), str(b), "--f", "x", "--e", "y", "--dev", "0.0001", "--test",
                 "1", "--outdir", str(tmp_path / "o2")]) == 2
    assert "--dev '0.0001': that fraction of the corpus' 6 lines is 0 lines" in _err(capsys)
    assert not (tmp_path / "o2").exists()


# ---- tune checks its outputs before the first iteration

def test_tune_out_directory_refused_before_decoding(tmp_path, capsys) -> None:
    from test_tune import _toy_tuning_model
    ini, src, ref = _toy_tuning_model(tmp_path)
    (tmp_path / "outdir").mkdir()
    base = ["tune", "-f", str(ini), "--input", str(src), "--reference", str(ref), "--no-progress"]
    assert main(base + ["--out", str(tmp_path / "outdir"), "--workdir", str(tmp_path / "w")]) == 2
    assert "outdir: is a directory" in _err(capsys)
    assert not (tmp_path / "w").exists()
    assert main(base + ["--out", str(tmp_path / "t.ini"), "--summary", str(tmp_path / "t.ini")]) == 2
    assert "the same file as --out" in _err(capsys)
    assert main(base + ["--out", str(tmp_path / "t.ini"), "--summary", str(ini / "x")]) == 2
    assert "a parent is not a directory" in _err(capsys)
    assert not (tmp_path / "t.ini.work").exists()


def test_tm_filter_refuses_two_tables_of_one_file_name(tmp_path, capsys) -> None:
    (tmp_path / "in.txt").write_text("a b\n", encoding="utf-8")
    for d in ("t1", "t2"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "pt.txt").write_text(f"a ||| {d} ||| 1 1 1 1\n", encoding="utf-8")
    out = tmp_path / "f"
    assert main(["tm", "filter", "--input", str(tmp_path / "in.txt"), "--table", str(tmp_path / "t1" / "pt.txt"),
                 str(tmp_path / "t2" / "pt.txt"), "--outdir", str(out)]) == 2  # the second would overwrite the first
    assert "the same file as --table" in _err(capsys)
    assert not (out / "pt.txt").exists()
