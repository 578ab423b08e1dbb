"""Sharded decoding (decode split / decode merge): the merged outputs of independent shard runs equal one unsharded
run byte for byte (1-best, scores, n-best with global ids) for every decoder; a part that does not fit its shard is
refused with one line and nothing is written."""
from __future__ import annotations

from pathlib import Path

import pytest

from smtbench.cli import main

SEARCHES = {
    "normal": ["normal", "-s", "50"],
    "cube": ["cube", "--pop-limit", "50", "-s", "50"],
    "beam": ["beam", "--variant", "de+ep", "--beam-limit", "20", "--ttable-limit", "10"],
}


def _decode(search: str, ini: Path, src: Path, out: Path) -> None:
    args = ["decode", *SEARCHES[search], "-f", str(ini), "-i", str(src), "-o", str(out) + ".out",
            "--scores", str(out) + ".scores", "--n-best", str(out) + ".nbest", "5", "--no-progress"]
    assert main(args) == 0


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_sharded_decode_equals_one_run(tmp_path, small_trained, search, capsys) -> None:
    ini, dev, _ = small_trained
    src = tmp_path / "dev.es"
    src.write_text("".join(x + "\n" for x in dev[:13]), encoding="utf-8")
    d = tmp_path / "shards"
    assert main(["decode", "split", "-i", str(src), "--shards", "4", "--outdir", str(d)]) == 0
    assert [len((d / f"shard{i}.txt").read_text().splitlines()) for i in range(4)] == [3, 3, 3, 4]
    assert (d / "whole.txt").read_bytes() == src.read_bytes()
    _decode(search, ini, d / "whole.txt", tmp_path / "whole")
    for i in range(4):
        _decode(search, ini, d / f"shard{i}.txt", tmp_path / f"part{i}")
    parts = [str(tmp_path / f"part{i}") for i in range(4)]
    assert main(["decode", "merge", "--manifest", str(d / "shards.json"), "--outputs", *[p + ".out" for p in parts],
                 "-o", str(tmp_path / "merged.out"), "--n-best-parts", *[p + ".nbest" for p in parts],
                 "--n-best", str(tmp_path / "merged.nbest"), "--scores-parts", *[p + ".scores" for p in parts],
                 "--scores", str(tmp_path / "merged.scores")]) == 0
    for ext in ("out", "scores", "nbest"):
        whole = (tmp_path / f"whole.{ext}").read_bytes()
        assert whole and (tmp_path / f"merged.{ext}").read_bytes() == whole, ext
    # the shards' own n-best ids start at 0 (what the merge rewrites): the test would pass vacuously otherwise
    assert (tmp_path / "part3.nbest").read_text().startswith("0 ||| ")
    ids = {int(x.split(" ||| ")[0]) for x in (tmp_path / "merged.nbest").read_text().splitlines()}
    assert ids == set(range(13))


def test_more_shards_than_sentences(tmp_path, small_trained, capsys) -> None:
    """More shards than sentences is refused (issue 41: one file per shard made `--shards 100000000` a hang); as
    many shards as sentences, the last without its final newline, merge to the unsharded run."""
    ini, dev, _ = small_trained
    src = tmp_path / "two.es"
    src.write_text(dev[0] + "\n" + dev[1], encoding="utf-8")  # no final newline: the shard adds it
    d = tmp_path / "s"
    assert main(["decode", "split", "-i", str(src), "--shards", "3", "--outdir", str(d)]) == 2
    assert "--shards 3" in capsys.readouterr().err and not d.exists()
    assert main(["decode", "split", "-i", str(src), "--shards", "2", "--outdir", str(d)]) == 0
    assert (d / "shard1.txt").read_bytes() == dev[1].encode("utf-8") + b"\n"
    _decode("normal", ini, src, tmp_path / "whole")
    for i in range(2):
        _decode("normal", ini, d / f"shard{i}.txt", tmp_path / f"p{i}")
    ps = [str(tmp_path / f"p{i}") for i in range(2)]
    assert main(["decode", "merge", "--manifest", str(d / "shards.json"), "--outputs", *[p + ".out" for p in ps],
                 "-o", str(tmp_path / "m.out"), "--n-best-parts", *[p + ".nbest" for p in ps],
                 "--n-best", str(tmp_path / "m.nbest")]) == 0
    assert (tmp_path / "m.out").read_bytes() == (tmp_path / "whole.out").read_bytes()
    assert (tmp_path / "m.nbest").read_bytes() == (tmp_path / "whole.nbest").read_bytes()


def test_merge_refuses_parts_that_do_not_fit(tmp_path, capsys) -> None:
    src = tmp_path / "in.txt"
    src.write_text("a b\nc\nd e f\n", encoding="utf-8")
    d = tmp_path / "s"
    assert main(["decode", "split", "-i", str(src), "--shards", "2", "--outdir", str(d)]) == 0
    (tmp_path / "o0").write_text("x\n")
    (tmp_path / "o1").write_text("y\n")  # shard1 has 2 sentences: a truncated part
    out = tmp_path / "merged"
    man = str(d / "shards.json")
    assert main(["decode", "merge", "--manifest", man, "--outputs", str(tmp_path / "o0"), str(tmp_path / "o1"),
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "o1: 1 lines" in err and "shard1.txt" in err
    assert not out.exists()
    (tmp_path / "o1").write_text("y\nz\n")
    (tmp_path / "n0").write_text("0 ||| x ||| F= 1 ||| 1\n")
    (tmp_path / "n1").write_text("2 ||| y ||| F= 1 ||| 1\n")  # id 2 is outside shard1's 0..1
    assert main(["decode", "merge", "--manifest", man, "--outputs", str(tmp_path / "o0"), str(tmp_path / "o1"),
                 "-o", str(out), "--n-best-parts", str(tmp_path / "n0"), str(tmp_path / "n1"),
                 "--n-best", str(tmp_path / "nb")]) == 2
    err = capsys.readouterr().err
    assert "n1:1: sentence id '2'" in err and not (tmp_path / "nb").exists()
    assert main(["decode", "merge", "--manifest", man, "--outputs", str(tmp_path / "o0"), "-o", str(out)]) == 2
    assert "1 files for the 2 shards" in capsys.readouterr().err
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\n")
    assert main(["decode", "split", "-i", str(tmp_path / "bad.txt"), "--shards", "2", "--outdir",
                 str(tmp_path / "b")]) == 2
    assert "bad.txt:2: invalid UTF-8" in capsys.readouterr().err


def test_report_decode_shards_compares_decompressed_and_names_a_difference(tmp_path, capsys) -> None:
    """`report decode_shards` (the experiment's one name: rule file, report verb and module) and `report
    mediani_distributed` (its table's and metrics' name) are one check."""
    import argparse
    import gzip

    from smtbench.cli import build_parser
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["report"]
    report = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert report["decode-shards"] is report["decode_shards"] and "shards" not in report
    assert report["decode_shards"].get_default("func") is report["mediani_distributed"].get_default("func")
    assert report["decode_shards"].get_default("func").__module__ == "smtbench.commands.report_decode_shards"
    (tmp_path / "a.gz").write_bytes(gzip.compress(b"x ||| y\n", mtime=1))
    (tmp_path / "b.gz").write_bytes(gzip.compress(b"x ||| y\n", mtime=2))  # other header, same content
    (tmp_path / "c").write_bytes(b"x ||| z\n")
    stem = tmp_path / "t"
    assert main(["report", "mediani_distributed", "--pair", "k=2", "phrase_table",
                 str(tmp_path / "a.gz"), str(tmp_path / "b.gz"), "--table", str(stem), "--metrics",
                 str(tmp_path / "m.csv")]) == 0
    assert (tmp_path / "m.csv").read_text().splitlines()[1] == "mediani_distributed,k=2,identical_phrase_table,1,exact"
    assert main(["report", "decode_shards", "--pair", "search=cube", "out",
                 str(tmp_path / "a.gz"), str(tmp_path / "c"), "--table", str(tmp_path / "u"), "--metrics",
                 str(tmp_path / "n.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "a.gz: differs from the one-job run" in err
    assert not (tmp_path / "n.csv").exists() and not (tmp_path / "u.md").exists()
