"""`smtbench bench lm` and `smtbench report mokry-lm`: rows, checksums, the kenlm row, table and figure."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from smtbench.cli import main
from smtbench.lm import backends
from smtbench.lm.backends import StreamScores
from smtbench.experiments.mokry_lm import LmBench, run_bench

pytest.importorskip("kenlm")
ROOT = Path(__file__).resolve().parents[1]
TEXT = ["in the beginning god created the heavens and the earth .",
        "the earth was formless and empty .", "god said , let there be light .", ""]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("benchlm")
    lmplz = ROOT / "build/lmplz/bin/lmplz"
    train = (TEXT * 3) + ["and the spirit of god was moving over the waters .", "and there was light ."]
    if lmplz.exists():
        arpa = d / "m.arpa"
        with open(arpa, "w") as fout:
            subprocess.run([str(lmplz), "-o", "3", "-S", "50M", "-T", str(d), "--discount_fallback"],
                           input="\n".join(train) + "\n", text=True, stdout=fout, stderr=subprocess.DEVNULL,
                           check=True)
    else:
        from test_lm_probing import toy_estimate  # noqa: PLC0415

        from smtbench.lm.arpa import write_arpa

        arpa = d / "m.arpa"
        write_arpa(toy_estimate(train, 3), arpa)
    text = d / "test.txt"
    text.write_text("\n".join(TEXT + ["an unknownword here"]) + "\n")
    return arpa, text, d


def test_bench_rows_and_report(model, tmp_path):
    arpa, text, _ = model
    out = tmp_path / "rows.jsonl"
    rc = main(["bench", "lm", "--arpa", str(arpa), "--text", str(text), "--queue-sizes", "1,3,16",
               "--repeats", "2", "--max-retakes", "0", "--min-queries", "500", "--name", "tiny", "--out", str(out)])
    assert rc == 0
    rows = pd.read_json(out, lines=True)
    assert set(rows.backend) == {"sequential", "automaton", "kenlm-module"}
    assert len(rows) == 2 * (1 + 3 + 1)
    ours = rows[rows.backend != "kenlm-module"]
    assert ours.checksum.nunique() == 1
    assert (rows.queries >= 500).all() and (rows.model == "tiny").all()
    assert rows[rows.backend == "kenlm-module"].includes.str.contains("string").all()
    km = rows[rows.backend == "kenlm-module"].log10_sum.iloc[0]
    assert km == pytest.approx(ours.log10_sum.iloc[0], abs=1e-3)
    assert (rows.ns_per_query > 0).all() and "machine_cpu" in rows

    stem = tmp_path / "tables" / "mokry_table3_3"
    fig = tmp_path / "figures" / "mokry_fig3_5.png"
    assert main(["report", "mokry-lm", "--rows", str(out), "--table", str(stem), "--figure", str(fig)]) == 0
    t = pd.read_csv(stem.with_suffix(".csv"))
    assert list(t.model) == ["tiny"]
    assert {"speedup", "best_queue_size", "paper_speedup", "paper_queue_size", "kenlm_module_ns"} <= set(t.columns)
    assert t.paper_model_mb.iloc[0] == 11  # nearest thesis size to a tiny model
    assert fig.stat().st_size > 1000
    assert "Table 3.3" in stem.with_suffix(".md").read_text()


def test_checksum_mismatch_fails_loudly(model, tmp_path):
    arpa, text, _ = model

    class Bad:
        name = "bad"
        nbytes = 1

        def score_stream(self, tokens):
            n = int(np.count_nonzero((tokens & np.uint32(backends.SENTENCE_MARK)) == 0))
            p = np.full(n, -1.0, dtype=np.float32)
            return StreamScores(p, np.ones(n, dtype=np.uint8), float(p.sum()), 1)

    backends.register("test-bad", lambda model, **kw: Bad())
    try:
        out = tmp_path / "rows.jsonl"
        with pytest.raises(RuntimeError, match="log10 sums differ"):
            run_bench(LmBench(arpa=str(arpa), text=str(text), queue_sizes=[2], repeats=1, min_queries=0,
                              backends=["sequential", "test-bad"], kenlm=False), out=str(out))
        assert not out.exists()  # no partial output
    finally:
        backends.BACKENDS.pop("test-bad", None)


def test_bad_arguments(model, tmp_path, capsys):
    arpa, text, _ = model
    assert main(["bench", "lm", "--arpa", str(arpa), "--text", str(text), "--queue-sizes", "0-3"]) == 2
    assert "queue-sizes" in capsys.readouterr().err
    assert main(["bench", "lm", "--arpa", str(arpa), "--text", str(tmp_path / "nope.txt")]) == 2
    assert main(["bench", "lm", "--arpa", str(arpa), "--text", str(text), "--backends", "nope"]) == 2
    assert main(["lm", "ppl", "--arpa", str(arpa), "--text", str(text), "--backend", "nope"]) == 2
    assert "unknown --backend" in capsys.readouterr().err


def test_working_set_probe_and_the_machines_reference_regime(model, tmp_path):
    """bench mokry_lm records a working-set probe with every repeat; `report regime-reference` makes a reference of
    a run's rows; a later run against a reference it is far off retakes its repeats (no pauses here) and keeps them
    flagged when the retakes run out, and the table shows the regime each run was taken in."""
    import json as _json

    arpa, text, _ = model
    args = ["bench", "mokry_lm", "--arpa", str(arpa), "--text", str(text), "--queue-sizes", "2", "--no-kenlm",
            "--repeats", "2", "--min-queries", "500", "--name", "tiny", "--spell-probe-mib", "0"]
    first = tmp_path / "first.jsonl"
    assert main(args + ["--out", str(first)]) == 0
    rows = pd.read_json(first, lines=True)
    assert (rows.regime_probe_ns > 0).all() and (rows.regime_name == "mokry_lm/tiny").all()
    assert rows.regime_ref_ns.isna().all()
    ref = tmp_path / "ref.json"
    assert main(["report", "regime-reference", "--rows", str(first), "--out", str(ref)]) == 0
    d = _json.loads(ref.read_text())
    assert d["entries"]["mokry_lm/tiny"]["repeats"] == 2
    d["entries"]["mokry_lm/tiny"]["ns"] *= 50  # a regime this run cannot be in
    ref.write_text(_json.dumps(d))
    second = tmp_path / "second.jsonl"
    assert main(args + ["--max-retakes", "1", "--regime-reference", str(ref), "--regime-pause", "0",
                        "--out", str(second)]) == 0
    rows = pd.read_json(second, lines=True)
    assert rows.retaken.sum() == 2 * 2 and rows.regime_off.all()  # 2 repeats x 2 points, each retaken once
    stem = tmp_path / "t3_3"
    assert main(["report", "mokry-lm", "--rows", str(second), "--table", str(stem)]) == 0
    t = pd.read_csv(stem.with_suffix(".csv"))
    assert t.regime_off_kept.iloc[0] == 2 and t.regime.iloc[0] < 0.1 and t.retaken_repeats.iloc[0] == 2


def test_glm_btree_rows_carry_the_working_set_probe(model, tmp_path):
    """bench glm_btree takes the same working-set probe (its probing LM's sequential walk); Table 3 shows it."""
    arpa, text, _ = model
    out = tmp_path / "glm.jsonl"
    assert main(["bench", "glm_btree", "--arpa", str(arpa), "--text", str(text), "--name", "tiny", "--threads", "1",
                 "--node-sizes", "7", "--batch-sizes", "100", "--repeats", "2", "--min-queries", "500",
                 "--spell-probe-mib", "0", "--out", str(out)]) == 0
    rows = pd.read_json(out, lines=True)
    assert (rows.dropna(subset=["attempt"]).regime_name == "glm_btree/tiny").all()  # every row of the loop
    assert rows.regime_probe_ns.notna().any()


def test_glm_btree_times_kenlm_at_every_thread_count(model, tmp_path):
    """Issue 40: KenLM's programs are timed at each of the table's thread counts in the same run (kenlm_benchmark
    -t T), and Table 3 divides each multi-thread row by the peer at its own thread count, with its interval."""
    from smtbench.lm import kenlm_peer
    from smtbench.report import glm_btree

    try:
        kenlm_peer.program("kenlm_benchmark")
        kenlm_peer.program("build_binary")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    arpa, text, _ = model
    trie = tmp_path / "m.trie"
    kenlm_peer.build_binary(arpa, "trie", trie)
    out = tmp_path / "glm.jsonl"
    assert main(["bench", "glm_btree", "--arpa", str(arpa), "--text", str(text), "--name", "tiny", "--threads", "1,2",
                 "--repeats", "2", "--min-queries", "2000", "--spell-probe-mib", "0", "--no-kenlm", "--no-gpu",
                 "--kenlm-binary", f"trie={trie}", "--out", str(out)]) == 0
    rows = pd.read_json(out, lines=True)
    peer = rows[rows.backend == "kenlm-trie-cpp"]
    assert sorted(set(peer.threads)) == [1, 2] and set(peer.run_id) == set(rows.dropna(subset=["run_id"]).run_id)
    assert set(peer.path) == {"kenlm_benchmark -q -t 1", "kenlm_benchmark -q -t 2"}
    assert (peer.peer_minor_faults > 0).all()
    t = glm_btree.table3(rows, "tiny").set_index("system")
    two, trie2 = t.loc["B-tree CPU (2 threads)"], t.loc["KenLM trie, C++ (2 threads)"]
    # the 2-thread peer, not the 1-thread one (the table rounds qps to integers: a slow tiny run has few digits)
    assert two.vs_kenlm_trie_cpp == pytest.approx(two.qps / trie2.qps, rel=1e-3), (two.qps, trie2.qps)
    assert two.vs_kenlm_trie_cpp_ci_low == two.vs_kenlm_trie_cpp_ci_low, rows[["backend", "threads", "repeat", "qps"]]
