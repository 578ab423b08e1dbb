"""The README's "Using your own data" walkthrough, run as written (on a smaller slice, with faster alignment and a
smaller LM and stack) in both directions and as another language pair, so that it cannot rot; plus the pieces it
relies on: tm train resumes without redoing anything, data prepare refuses what it cannot split, postprocess/bleu."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The README block, with these replacements (each must match, so an edited README fails here first).
SMALLER = [
    ("head -n 5000", "head -n 2100"),   # 2000 training verses
    ("--dev 200 --test 200", "--dev 20 --test 80"),
    # alignment with fewer samples and iterations, a trigram LM, shorter phrases: seconds instead of minutes
    ("--outdir mymodel", "--outdir mymodel --eflomal-iterations 1 --eflomal-samplers 1 --eflomal-model 2 "
                         "--lm-order 3 --max-phrase-length 4 --quiet"),
    ("-o test.out.$E", "-o test.out.$E -s 20 --no-progress"),
]


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sec = text.split("## Using your own data", 1)[1]
    m = re.search(r"```sh\n(.*?)```", sec, re.S)
    assert m, "README: no ```sh block under 'Using your own data'"
    return m.group(1)


def _script(direction: str) -> tuple[str, str]:
    s = readme_block()
    for a, b in SMALLER:
        assert a in s, f"README walkthrough no longer contains {a!r}"
        s = s.replace(a, b)
    if direction == "es-en":
        return s, "en"
    if direction == "en-es":
        s2 = s.replace("F=es E=en", "F=en E=es")
        assert s2 != s
        return s2, "es"
    # another language pair: the columns swapped and renamed (English as "xx" -> Spanish as "yy")
    s2 = s.replace("F=es E=en", "mv corpus.en corpus.xx; mv corpus.es corpus.yy; F=xx E=yy")
    assert s2 != s
    return s2, "yy"


def _run(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "SMTBENCH_PROGRESS": "0"}
    r = subprocess.run(["bash", "-e", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{cmd}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    return r


@pytest.mark.parametrize("direction", ["es-en", "en-es", "renamed"])
def test_readme_walkthrough(tmp_path, direction):
    (tmp_path / "resources").symlink_to(ROOT / "resources")
    script, e = _script(direction)
    r = _run(script, tmp_path)
    last = r.stdout.strip().splitlines()
    assert re.fullmatch(r"\d+\.\d\d", last[-1]), last[-3:]
    assert "nrefs:1|case:mixed" in last[-2] and "tok:13a" in last[-2]
    assert float(last[-1]) > 2.0, last[-2]   # a working system on 2000 verses; a broken one scores ~0
    out = (tmp_path / f"test.detok.{e}").read_text(encoding="utf-8").splitlines()
    assert len(out) == 80
    # the second run of the same training command redoes nothing
    ini = tmp_path / "mymodel" / "moses.ini"
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "mymodel").iterdir()
              if p.is_file() and not p.name.startswith(".smtbench.")}  # the step locks name their last holder
    train = next(line for line in script.splitlines() if line.startswith("smtbench tm train"))
    setvars = re.search(r"F=\S+ E=\S+", script).group(0)
    r2 = _run(setvars + "\n" + train, tmp_path)
    rows = [line.split() for line in r2.stdout.splitlines()[1:] if line.split()[:1] and line.split()[0] in
            ("corpus", "align", "extract", "score", "reorder", "lm", "model")]
    assert len(rows) == 7 and all(row[1:3] == ["done", "before"] for row in rows), r2.stdout
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "mymodel").iterdir()
             if p.is_file() and not p.name.startswith(".smtbench.")}
    assert {k: v for k, v in after.items() if k.name != "train.json"} == \
        {k: v for k, v in before.items() if k.name != "train.json"}
    assert ini.exists()


def _cli(*args: str) -> tuple[int, str, str]:
    r = subprocess.run([sys.executable, "-m", "smtbench.cli", *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def test_data_prepare_refuses_what_it_cannot_split(tmp_path):
    tsv = tmp_path / "f.tsv"
    tsv.write_text("id\tde\tfr\n1\tHallo.\tSalut.\n2\tJa.\tOui.\n3\tNein.\tNon.\n", encoding="utf-8")
    rc, _, err = _cli("data", "prepare", "--tsv", str(tsv), "--f", "de", "--e", "fr", "--outdir", str(tmp_path / "o"))
    assert rc == 2 and "without sizes" in err and err.count("\n") == 1
    rc, _, err = _cli("data", "prepare", "--tsv", str(tsv), "--outdir", str(tmp_path / "o"))
    assert rc == 2 and "no column 'es'" in err and "id, de, fr" in err
    rc, _, err = _cli("data", "prepare", "--tsv", str(tsv), "--f", "de", "--e", "fr", "--dev", "2", "--test", "1",
                      "--outdir", str(tmp_path / "o"))
    assert rc == 2 and "nothing to train on" in err
    assert not (tmp_path / "o").exists()
    bible_like = tmp_path / "b.tsv"   # verse references, but no held-out book: the book split cannot work
    bible_like.write_text("Gen.1.1\ta\tb\nGen.1.2\tc\td\n", encoding="utf-8")
    rc, _, err = _cli("data", "prepare", "--tsv", str(bible_like), "--outdir", str(tmp_path / "o"))
    assert rc == 2 and "leaves dev, test empty" in err
    rc, out, err = _cli("data", "prepare", "--tsv", str(tsv), "--f", "de", "--e", "fr", "--dev", "1", "--test",
                        "1", "--casing", "keep", "--outdir", str(tmp_path / "o"))
    assert rc == 0 and out.split() == ["train=1", "dev=1", "test=1"], err
    assert (tmp_path / "o" / "train.de").read_text() == "Hallo .\n"
    assert (tmp_path / "o" / "test.raw.fr").read_text() == "Non.\n"
    assert (tmp_path / "o" / "dev.ref").read_text() == "3\n"   # a line number of the input file


def test_data_prepare_line_lists(tmp_path):
    from smtbench import data
    (tmp_path / "a.x").write_text("A b.\nC d.\nE f.\nG h.\n", encoding="utf-8")
    (tmp_path / "a.y").write_text("1 2.\n3 4.\n5 6.\n7 8.\n", encoding="utf-8")
    (tmp_path / "dev.lines").write_text("2\n", encoding="utf-8")
    (tmp_path / "test.lines").write_text("# held out\n4\n", encoding="utf-8")
    counts = data.prepare(None, tmp_path / "o", text=(str(tmp_path / "a.x"), str(tmp_path / "a.y")), f="x", e="y",
                          split="lines", dev=str(tmp_path / "dev.lines"), test=str(tmp_path / "test.lines"))
    assert counts == {"train": 2, "dev": 1, "test": 1}
    assert (tmp_path / "o" / "train.x").read_text() == "a b .\ne f .\n"
    (tmp_path / "test.lines").write_text("2\n", encoding="utf-8")
    with pytest.raises(data.CorpusFormatError, match="in both --dev and --test"):
        data.prepare(None, tmp_path / "o2", text=(str(tmp_path / "a.x"), str(tmp_path / "a.y")), f="x", e="y",
                     split="lines", dev=str(tmp_path / "dev.lines"), test=str(tmp_path / "test.lines"))


def test_tm_train_step_order_and_small_lm(tmp_path):
    for ext, words in (("f", "a b c"), ("e", "x y z")):
        (tmp_path / f"c.{ext}").write_text(f"{words}\n" * 5, encoding="utf-8")
    base = ["tm", "train", "--corpus", str(tmp_path / "c"), "--f", "f", "--e", "e", "--outdir", str(tmp_path / "m"),
            "--quiet"]
    rc, _, err = _cli(*base, "--step", "extract")
    assert rc == 2 and "missing input" in err and "'corpus' step first" in err, err
    rc, _, err = _cli(*base, "--step", "corpus,lm")
    assert rc == 2 and "too small for an order-5 LM" in err and "--lm-order" in err, err
    rc, _, err = _cli(*base, "--step", "bogus")
    assert rc == 2 and "unknown step" in err


def test_symmetrization_heuristics():
    from smtbench.tm.align import grow_diag_final_and, symmetrize
    direct, inverse = [(0, 0), (1, 2), (2, 1)], [(0, 0), (1, 1), (2, 1), (3, 2)]
    assert symmetrize(direct, inverse, 4, 3) == grow_diag_final_and(direct, inverse, 4, 3)
    assert set(symmetrize(direct, inverse, 4, 3, "intersect")) == {(0, 0), (2, 1)}
    assert set(symmetrize(direct, inverse, 4, 3, "union")) == set(direct) | set(inverse)
    grow = set(symmetrize(direct, inverse, 4, 3, "grow"))
    gd = set(symmetrize(direct, inverse, 4, 3, "grow-diag"))
    assert {(0, 0), (2, 1)} <= grow <= gd <= set(symmetrize(direct, inverse, 4, 3, "grow-diag-final"))
    with pytest.raises(ValueError, match="unknown symmetrization"):
        symmetrize(direct, inverse, 4, 3, "bogus")


def test_bleu_and_postprocess(tmp_path):
    (tmp_path / "ref").write_text("The house is big.\nHello, world!\n", encoding="utf-8")
    (tmp_path / "hyp.tok").write_text("the house is big .\nhello , world !\n", encoding="utf-8")
    rc, out, err = _cli("postprocess", "-i", str(tmp_path / "hyp.tok"), "--detruecase", "--detokenize", "en",
                        "-o", str(tmp_path / "hyp"))
    assert rc == 0, err
    assert (tmp_path / "hyp").read_text() == "The house is big.\nHello, world!\n"
    rc, out, err = _cli("bleu", "--reference", str(tmp_path / "ref"), "--hypothesis", str(tmp_path / "hyp"))
    assert rc == 0 and out.splitlines()[-1] == "100.00" and "tok:13a" in out.splitlines()[-2]
    (tmp_path / "short").write_text("x\n", encoding="utf-8")
    rc, _, err = _cli("bleu", "--reference", str(tmp_path / "ref"), "--hypothesis", str(tmp_path / "short"))
    assert rc == 2 and "2 lines but" in err
