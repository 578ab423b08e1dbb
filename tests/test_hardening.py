"""Bad input and absurd options get a clear error naming the option (or file) and its limit, before anything
is allocated; never a traceback (the cases of the hardening issue)."""
from __future__ import annotations

import pytest

from smtbench.cli import main

TOY = "\\data\\\nngram 1=3\n\n\\1-grams:\n-1\t<s>\t0\n-1\t</s>\n-0.5\tb\n\n\\end\\\n"


@pytest.mark.parametrize("argv, match", [
    (["bench", "hash", "--table-mib", "18000000000000"], "--table-mib 18000000000000: must be in"),
    (["bench", "hash", "--table-mib", "1", "--seed", "-1"], "--seed -1: must be in"),
    (["bench", "hash", "--table-mib", "1", "--burnin", "-1"], "--burnin -1: must be in"),
    (["bench", "hash", "--table-mib", "1", "--burnin", "99999999999"], "--burnin 99999999999: must be in"),
    (["bench", "hash", "--table-mib", "1", "--fill-threads", "5000"], "--fill-threads 5000: must be in 0..1024"),
    (["bench", "hash", "--table-mib", "1", "--load-factor", "1e-7"], "--load-factor 1e-07: must be in"),
    (["bench", "hash", "--table-mib", "1", "--queue-sizes", "0-50000000"], "--queue-sizes '0-50000000': 50000000 is outside 0..64"),
])
def test_bench_hash_limits(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert match in err and len(err) < 500


@pytest.mark.parametrize("memory, match", [("-5M", "must be between"), ("infM", "not a finite size"),
                                           ("1e400M", "not a finite size"), ("0", "must be between"),
                                           ("0.5M", "must be between")])
def test_tm_score_memory(tmp_path, memory, match, capsys):
    ex = tmp_path / "e"
    ex.write_text("a ||| b ||| 0-0\n")
    lex = tmp_path / "l"
    lex.write_text("b a 1\n")
    out = tmp_path / "pt.gz"
    assert main(["tm", "score", "--extract", str(ex), "--lex-f2e", str(lex), "--lex-e2f", str(lex), "--out",
                 str(out), f"--memory={memory}"]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_tm_score_threads_dirs_and_extract_inv(tmp_path, capsys):
    ex = tmp_path / "e"
    ex.write_text("a ||| b ||| 0-0\n")
    lex = tmp_path / "l"
    lex.write_text("b a 1\n")
    base = ["tm", "score", "--lex-f2e", str(lex), "--lex-e2f", str(lex), "--out", str(tmp_path / "o.gz")]
    assert main(base + ["--extract", str(ex), "--threads", "257"]) == 2
    assert "--threads 257: must be in 1..256" in capsys.readouterr().err
    assert main(base + ["--extract", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(base + ["--extract", str(ex), "--extract-inv", str(tmp_path / "nowhere")]) == 2
    assert "--extract-inv" in capsys.readouterr().err


def test_lm_ppl_options_and_inputs(tmp_path, capsys):
    arpa = tmp_path / "toy.arpa"
    arpa.write_text(TOY)
    text = tmp_path / "t.txt"
    text.write_text("b b\n")
    assert main(["lm", "ppl", "--arpa", str(tmp_path), "--text", str(text)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(text), "--queue-size", "4"]) == 2
    assert "--queue-size applies to the automaton backend only" in capsys.readouterr().err
    assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(text), "--node-size", "7"]) == 2
    assert "--node-size applies to the btree backends only" in capsys.readouterr().err
    assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(text), "--backend", "btree",
                 "--node-size", "0"]) == 2
    assert "node" in capsys.readouterr().err.lower()
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"b \xff\xfe b\n")
    assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(bad)]) == 2
    assert "bad.txt: not UTF-8" in capsys.readouterr().err


def test_every_native_code_is_mapped():
    from smtbench.native import NativeError, _BY_CODE, lib
    codes = [lib.SB_EINVAL, lib.SB_ENOMEM, lib.SB_EFULL, lib.SB_ETHREAD, lib.SB_EFORMAT, lib.SB_ENOTFOUND,
             lib.SB_EIO, lib.SB_EUNSUPPORTED]
    for c in codes:
        assert c in _BY_CODE and issubclass(_BY_CODE[c], NativeError)
