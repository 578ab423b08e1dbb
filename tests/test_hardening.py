"""Bad input and absurd options get a clear error naming the option (or file) and its limit, before anything
is allocated; never a traceback (the cases of the hardening issue)."""
from __future__ import annotations

import pytest

from smtbench.cli import main

from toy_models import TOY_ARPA  # noqa: E402


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
    arpa.write_text(TOY_ARPA)
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
    assert "bad.txt:1: invalid UTF-8" in capsys.readouterr().err


def test_every_native_code_is_mapped():
    from smtbench.native import NativeError, _BY_CODE, lib
    codes = [lib.SB_EINVAL, lib.SB_ENOMEM, lib.SB_EFULL, lib.SB_ETHREAD, lib.SB_EFORMAT, lib.SB_ENOTFOUND,
             lib.SB_EIO, lib.SB_EUNSUPPORTED]
    for c in codes:
        assert c in _BY_CODE and issubclass(_BY_CODE[c], NativeError)


def _big_extract(tmp_path, n=1_500_000):
    ex = tmp_path / "extract"
    with open(ex, "w") as fh:
        fh.writelines(f"w{i % 5003} ||| x{i % 7001} ||| 0-0\n" for i in range(n))
    lex = tmp_path / "lex"
    with open(lex, "w") as fh:
        fh.writelines(f"x{j} w{i} 0.5\n" for i, j in zip(range(5003), range(5003)))
        fh.writelines(f"x{j} w0 0.5\n" for j in range(5003, 7001))
    return ex, lex


@pytest.mark.parametrize("sig", ["TERM", "INT"])
def test_tm_score_signal_cleans_up_quickly(tmp_path, sig):
    """SIGTERM (how SLURM and Snakemake cancel jobs) and SIGINT stop `tm score` within a second and leave no run
    folder or temporary output behind."""
    import signal
    import subprocess
    import sys
    import time
    ex, lex = _big_extract(tmp_path)
    out = tmp_path / "out" / "pt.gz"
    p = subprocess.Popen([sys.executable, "-m", "smtbench.cli", "tm", "score", "--extract", str(ex), "--lex-f2e",
                          str(lex), "--lex-e2f", str(lex), "--out", str(out), "--memory", "1M"],
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline and not any(x.name.startswith(".pscore.") for x in out.parent.glob(".*")
                                             if out.parent.exists()):
        time.sleep(0.05)
    time.sleep(0.3)
    if p.poll() is not None:
        pytest.skip("the run finished before the signal could be sent")
    t0 = time.time()
    p.send_signal(getattr(signal, f"SIG{sig}"))
    p.wait(timeout=10)
    assert time.time() - t0 < 1.5
    assert p.returncode == 128 + getattr(signal, f"SIG{sig}")
    assert not out.exists()
    assert [x.name for x in out.parent.iterdir()] == []


def test_stale_run_folders_of_dead_processes_are_removed(tmp_path):
    import os
    import subprocess
    from smtbench.ioutil import remove_stale_runs
    dead = subprocess.run(["true"]).args and subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f".pscore.{dead.pid}.abc").mkdir()
    (tmp_path / f".pscore.{os.getpid()}.def").mkdir()   # alive: kept
    removed = remove_stale_runs(tmp_path, ".pscore.")
    assert [os.path.basename(r) for r in removed] == [f".pscore.{dead.pid}.abc"]
    assert (tmp_path / f".pscore.{os.getpid()}.def").exists()


def test_score_sort_names_halves_out_of_step(tmp_path):
    """extract and extract.inv that disagree: the consolidate step's own error, not `sorting half.e2f failed`."""
    from smtbench.tm import score as S
    ex, inv, lex = tmp_path / "e", tmp_path / "i", tmp_path / "l"
    ex.write_text("a ||| x ||| 0-0\nb ||| y ||| 0-0\n")
    inv.write_text("x ||| a ||| 0-0\nz ||| b ||| 0-0\n")
    lex.write_text("x a 0.5\ny b 0.5\nz b 0.5\n")
    with pytest.raises(S.PhraseFormatError, match="do not hold the same phrase pairs"):
        S.score_sortpipe(str(ex), str(inv), str(lex), str(lex), str(tmp_path / "o.gz"))
    assert not (tmp_path / "o.gz").exists()


# its own shape: TOY_ARPA plus a word c and a 3-gram (c a b) whose context (c a) is missing
MISSING_CONTEXT = TOY_MC = """\\data\\
ngram 1=6
ngram 2=4
ngram 3=2

\\1-grams:
-1.0\t<unk>\t0
-99\t<s>\t-0.5
-0.7\t</s>
-0.6\ta\t-0.3
-0.8\tb\t-0.2
-0.9\tc\t-0.1

\\2-grams:
-0.3\t<s> a\t-0.1
-0.4\ta b\t-0.15
-0.5\tb </s>
-0.6\tb a\t0

\\3-grams:
-0.2\t<s> a b
-0.25\tc a b

\\end\\
"""


def test_missing_context_refused_by_every_backend_as_by_kenlm(tmp_path, capsys):
    """`c a b` without the 2-gram `c a`: KenLM refuses it in both structures (the kenlm module loads probing; when
    KenLM's build_binary is built, its trie is asked too), and so does every backend here."""
    import subprocess
    from pathlib import Path
    arpa = tmp_path / "mc.arpa"
    arpa.write_text(MISSING_CONTEXT)
    text = tmp_path / "t.txt"
    text.write_text("c a b\n")
    for backend in ("sequential", "automaton", "btree"):
        assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(text), "--backend", backend]) == 2
        assert "the context of the 3-gram 'c a b' is not a 2-gram" in capsys.readouterr().err, backend
    kenlm = pytest.importorskip("kenlm")
    with pytest.raises(Exception, match="context"):
        kenlm.Model(str(arpa))
    root = Path(__file__).resolve().parents[1]
    for bb in (root / "build/lmplz/bin/build_binary",):
        if bb.exists():
            for structure in ("probing", "trie"):
                r = subprocess.run([str(bb), structure, str(arpa), str(tmp_path / structure)], capture_output=True,
                                   text=True)
                assert r.returncode != 0 and "context" in (r.stdout + r.stderr), structure
            break


def test_measurement_refuses_another_profiles_build(tmp_path, monkeypatch, capsys):
    """The workflow's timing rules name their profile's build stamp; a C extension compiled with other flags (one
    file shared by all profiles) makes the benchmark fail before it records a row."""
    import io
    import json

    from smtbench.benchutil import RowWriter
    from smtbench.native import buildinfo

    stamp = tmp_path / "buildinfo.json"
    flags = buildinfo()["cflags_compiled"].split(" ")
    stamp.write_text(json.dumps({"cflags": flags}))
    monkeypatch.setenv("SMTBENCH_EXPECT_BUILD", str(stamp))
    RowWriter("x", io.StringIO())  # the same flags: fine
    stamp.write_text(json.dumps({"cflags": flags + ["-march=native"]}))
    with pytest.raises(RuntimeError, match="another profile rebuilt it"):
        RowWriter("x", io.StringIO())
    from smtbench.cli import main  # through the CLI: one line, exit status 2, no rows file
    assert main(["bench", "mokry_hash", "--table-mib", "1", "--lookups", "1000", "--out", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "another profile rebuilt it" in err and "Traceback" not in err and not (tmp_path / "r.jsonl").exists()
