"""`smtbench count` (issue 42): the count gate fails on a deliberate slowdown of the hash probe loop, with one line
naming the kernel, the metric, the baseline and the new value, and passes the unchanged build; the same build
counts the same twice; the baseline file and the callgrind reader refuse or read what they should."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from smtbench import counts
from smtbench.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _have_valgrind() -> str | None:
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (`make valgrind` or apt-get install valgrind)"
    from smtbench.native import lib

    if not lib.sb_cg_available():
        return "the extension was built without valgrind/callgrind.h: rebuild it after installing valgrind"
    return None


def _table(path: Path, rows: list[tuple[str, str, float]]) -> None:
    lines = [",".join(counts.CSV_COLUMNS)]
    lines += [f"{p},ours,sb_hash_find_batch,lookup,{m},{v}" for p, m, v in rows]
    path.write_text("\n".join(lines) + "\n")


def test_gate_lines_and_tolerances(tmp_path, capsys):
    """Without valgrind: a rise beyond the row's own tolerance is one line and exit 1, a fall or a rise within it is
    not; a point of ours missing from the run fails; a bad baseline line is a one-line error naming it."""
    base = tmp_path / "base.csv"
    _table(tmp_path / "a.csv", [("p1", "ir", 100), ("p1", "ll_miss", 1.0), ("p2", "ir", 50)])
    assert main(["count", "--check", str(tmp_path / "a.csv"), "--baseline", str(base), "--update"]) == 0
    text = base.read_text().replace("p1,ours,sb_hash_find_batch,lookup,ll_miss,1.0,0.02",
                                    "p1,ours,sb_hash_find_batch,lookup,ll_miss,1.0,0.2")
    base.write_text(text)
    _table(tmp_path / "b.csv", [("p1", "ir", 103), ("p1", "ll_miss", 1.1), ("p2", "ir", 40)])
    capsys.readouterr()
    assert main(["count", "--check", str(tmp_path / "b.csv"), "--baseline", str(base)]) == 1
    out = capsys.readouterr().out.splitlines()
    regress = [line for line in out if line.startswith("count regression")]
    assert regress == ["count regression: p1 (sb_hash_find_batch) ir per lookup: baseline 100, now 103 (+3.0%, "
                       "tolerance 2%)"]
    assert any(line.startswith("count fell: p2 ir") for line in out)
    _table(tmp_path / "c.csv", [("p1", "ir", 100), ("p1", "ll_miss", 1.0)])
    assert main(["count", "--check", str(tmp_path / "c.csv"), "--baseline", str(base)]) == 1
    assert "count missing: p2 (sb_hash_find_batch) ir per lookup" in capsys.readouterr().out
    base.write_text(text.replace("p2,ours,sb_hash_find_batch,lookup,ir,50,0.02", "p2,ours,x,lookup,ir,fifty,0.02"))
    assert main(["count", "--check", str(tmp_path / "a.csv"), "--baseline", str(base)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{base}:4:" in err[0], err


def test_function_costs_reads_self_cost(tmp_path):
    """Self costs per function from a callgrind file: a call's inclusive line (after calls=) is not its caller's."""
    f = tmp_path / "cg.out"
    f.write_text("version: 1\ncreator: test\nevents: Ir Dr\nfl=(1) a.c\nfn=(1) main\n10 5 1\n"
                 "cfn=(2) kernel\ncalls=1 20\n11 900 300\n12 7 0\nfn=(2)\n20 900 300\ntotals: 922 306\n")
    assert counts.function_costs(f) == {"main": 12, "kernel": 900}
    assert counts.parse_callgrind(f)[1] == {"Ir": 922, "Dr": 306}
    g = tmp_path / "cg2.out"
    g.write_text(f.read_text().replace("20 900 300", "20 1200 300"))
    lines = counts.diff(f, g)
    assert lines[1].split() == ["+300", "Ir", "900", "->", "1,200", "kernel"]


def test_slowdown_fails_the_gate_unchanged_build_passes(tmp_path, monkeypatch, capsys):
    """The hash points (1 MiB table) counted with the package's build (twice) and with a build of the same sources
    plus -DSB_SLOWDOWN_PROBE (extra work in the probe loop, compiled into a temporary folder)."""
    why = _have_valgrind()
    if why:
        pytest.skip(why)
    from smtbench.native import buildinfo

    if buildinfo().get("native"):
        pytest.skip("the package's extension is a -march=native build: counts need the portable one")
    slow = tmp_path / "slow"
    env = {**os.environ, "SMTBENCH_CFLAGS": "-DSB_SLOWDOWN_PROBE", "SMTBENCH_NATIVE": "0"}
    r = subprocess.run([sys.executable, str(ROOT / "pylib/smtbench/_build.py"), "--outdir", str(slow)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    ext = next((slow / "smtbench").glob("_native*.so"))
    points = counts.select("hash-1mib")

    def run(name: str) -> Path:
        res = counts.count(points, counts.default_oracle(), tmp_path / "work")
        table = tmp_path / f"{name}.csv"
        counts.write_outputs(res, str(tmp_path / f"{name}.jsonl"), str(table))
        return table

    first = run("first")
    base = tmp_path / "baseline.csv"
    counts.update_baseline(first, base)
    again = run("again")
    assert again.read_text() == first.read_text()  # the same build counts the same
    assert main(["count", "--check", str(again), "--baseline", str(base)]) == 0
    monkeypatch.setenv("SMTBENCH_COUNT_EXT", str(ext))
    slowed = run("slowed")
    capsys.readouterr()
    assert main(["count", "--check", str(slowed), "--baseline", str(base)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("count regression")]
    ir = [line for line in lines if " ir per lookup" in line]
    assert len(ir) == 2, lines  # both queue sizes run the probe loop
    assert ir[0].startswith("count regression: hash-kv-1mib-q0 (sb_hash_find_batch) ir per lookup: baseline ")
    assert ", now " in ir[0] and "tolerance 2%" in ir[0]


def test_kenlm_pairs_and_the_seeded_stream():
    """Without valgrind: our SplitMix64 is the reference generator (KenLM's benchmark with SEED is checked against it
    on every count: the xor of the keys it drew); the keys tables are sized as KenLM's benchmark sizes them; every
    pair joins a point of ours with a peer's point of the same unit, and a peer's pair is a point of ours."""
    import numpy as np

    assert [hex(int(x)) for x in counts.splitmix64(0, 2)] == ["0xe220a8397b1dcdaf", "0x6e789e6aa1b965f4"]
    for mib in counts.KEYS_MIB:
        buckets, entries = counts.keys_plan(mib)
        assert buckets * 8 == mib << 20
        # KenLM's Size(): max(entries + 1, int(1.5f * entries)) buckets rounded up to a power of two
        need = max(entries + 1, int(np.float32(1.5) * np.float32(entries)))
        assert 1 << (need - 1).bit_length() == buckets and int(np.float32(1.5) * np.float32(entries + 1)) >= buckets
    for ours, peer in counts.PAIRS.items():
        a, b = counts.BY_NAME[ours], counts.BY_NAME[peer]
        assert (a.system, a.unit) == ("ours", b.unit) and b.system != "ours", (ours, peer)
        assert counts.BY_NAME[counts.pair_of(peer)].system == "ours"
    assert counts.pair_of("hash-keys-64mib-q16") == "kenlm-hash-64mib-q16"
    assert counts.pair_of("kenlm-trie-o5") == "btree-o5-k31"


def test_moses_pairs():
    """The Moses-side peers: each Moses2 point has its search settings, and each peer's pair is our point of the
    same work (the decoders', the scorer's)."""
    assert set(counts.MOSES2_SEARCH) == {p.name for p in counts.POINTS if p.system == "moses2"}
    assert {counts.pair_of(p) for p in counts.MOSES2_SEARCH} == {"cube-p400-s400", "normal-s100"}
    assert counts.pair_of("moses-score") == "score-t1" and counts.BY_NAME["score-t1"].unit == "extract line"


def test_kenlm_hash_points_one_dump_per_queue(tmp_path, monkeypatch):
    """KenLM's hash benchmark with SEED on a small table under valgrind: it draws our SplitMix64 keys (checked by
    _run_kenlm_hash), one dump per counted queue, known by its LookupNs, the same counts twice."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    from smtbench.lm import kenlm_peer

    try:
        kenlm_peer.hash_program(seeded=True)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    monkeypatch.setattr(counts, "keys_plan", lambda mib: (2048, 1365))
    monkeypatch.setattr(counts, "HASH_LOOKUPS", 3000)
    runs = []
    for i in range(2):
        (tmp_path / str(i)).mkdir()
        got = counts._run_kenlm_hash(1, tmp_path / str(i), tmp_path / f"keep{i}")
        assert sorted(got) == ["kenlm-hash-1mib-q0", "kenlm-hash-1mib-q16"]
        assert sorted(p.name for p in (tmp_path / f"keep{i}").iterdir()) == [
            "kenlm-hash-1mib-q0.callgrind", "kenlm-hash-1mib-q16.callgrind"]
        runs.append({k: (v["units"], v["events"]) for k, v in got.items()})
    assert runs[0] == runs[1]
    q0, q16 = (runs[0][f"kenlm-hash-1mib-q{q}"][1] for q in (0, 16))
    assert 3000 * 10 < q0["Ir"] < q16["Ir"] < 3000 * 200  # the queue's bookkeeping costs instructions
    assert q0["Dw"] < 100 < 3000 < q16["Dw"]  # Immediate writes nothing per lookup; the queue writes its ring


def test_moses2_model_filters_tables_and_binarizes_the_lm(tmp_path):
    """The model the Moses2 points load: the ini's phrase and reordering tables keep exactly the lines whose source
    phrase occurs in the decoded sentences, the LM path names KenLM's binary, every other ini line stays."""
    import gzip
    import lzma

    from smtbench.lm import kenlm_peer

    try:
        kenlm_peer.program("build_binary")
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    o = tmp_path / "oracle"
    o.mkdir()
    (o / "dev.es").write_text("".join(f"a b{i}\n" for i in range(12)))  # b10, b11: past the decoded sentences
    pt = ["a ||| x ||| 1 1 1 1 ||| ||| 1 1 1", "a b3 ||| x y ||| 1 1 1 1 ||| ||| 1 1 1",
          "b11 ||| z ||| 1 1 1 1 ||| ||| 1 1 1", "c ||| w ||| 1 1 1 1 ||| ||| 1 1 1"]
    for name, lines in (("phrase-table.dev.gz", pt),
                        ("reordering-table.dev.gz", [x.rsplit(" ||| ", 2)[0] for x in pt])):
        with gzip.open(o / name, "wt") as fh:
            fh.write("".join(line + "\n" for line in lines))
    arpa = ("\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\t0\n-1\t<s>\t0\n-1\t</s>\t0\n-0.5\tx\t0\n\n"
            "\\2-grams:\n-0.3\t<s> x\n\n\\end\\\n")
    (o / "lm-en5.arpa.xz").write_bytes(lzma.compress(arpa.encode()))
    ini = ("[feature]\nPhraseDictionaryMemory name=TM path=phrase-table.dev.gz input-factor=0\n"
           "LexicalReordering name=LR path=reordering-table.dev.gz\n"
           "KENLM name=LM0 factor=0 path=lm-en5.arpa.xz order=5\n[weight]\nLM0= 0.5\n")
    (o / "moses.ini").write_text(ini)
    got = counts._moses2_model(o, tmp_path / "work")
    text = got.read_text().splitlines()
    assert [line for line in text if "path=" not in line] == [line for line in ini.splitlines() if "path=" not in line]
    paths = dict(re.search(r"^(\w+) .*path=(\S+)", line).groups() for line in text if "path=" in line)
    assert paths["KENLM"] == str((tmp_path / "work" / "lm-en5.probing").resolve())
    for feature in ("PhraseDictionaryMemory", "LexicalReordering"):
        with gzip.open(paths[feature], "rt") as fh:
            assert [line.split(" ||| ")[0] for line in fh] == ["a", "a b3"]
    assert counts._moses2_model(o, tmp_path / "work") == got  # made once


def test_driver_farm_links_follow_each_group(tmp_path):
    """The driver's link farm is made again for each group: f/o is the oracle for one group and another group's own
    inputs for the next (the scoring point), never the first group's target left behind."""
    from smtbench import counts

    a, b = tmp_path / "oracle", tmp_path / "score-inputs"
    a.mkdir()
    b.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    argv, env, cwd = counts._canonical_driver(run, a, ["g", "g.json", "{o}"])
    assert (run / "f" / "o").resolve() == a.resolve() and argv[-1] == "f/o" and cwd == run
    counts._canonical_driver(run, b, ["g", "g.json", "{o}"])
    assert (run / "f" / "o").resolve() == b.resolve()
    assert set(env) >= {"PYTHONPATH", "PYTHONPYCACHEPREFIX", "PYTHONHASHSEED", "SMTBENCH_COUNT_PAD"}
    assert not any(k.startswith("HOME") or k == "USER" for k in env)  # no inherited variables


def test_prepared_reorder_point_holds_its_path(tmp_path, monkeypatch):
    """The score group's reordering point writes the table it names after its preparation's locals are gone: the
    path's char[] is held by the point (a cffi pointer array does not keep its items alive; held by the array alone
    it was freed, and the next char[] of its size took its memory: the table went to that path, or nowhere)."""
    import gc

    from smtbench.native import ffi

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("lex.f2e", "lex.e2f", "extract", "train.es", "train.en", "train.aligned.grow-diag-final-and"):
        (inputs / name).write_text("")
    (inputs / "extract.o").write_text("a ||| b ||| mono mono\na ||| b ||| swap other\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)
    points = counts._prepare_score(inputs)
    gc.collect()
    size = len(str(Path("reorder-parts") / "reordering-table")) + 1
    decoys = [ffi.new("char[]", b"gone/elsewhere"[: size - 1].ljust(size - 1, b"x")) for _ in range(64)]
    run, checksum = points["reorder-t1"]
    assert run() == 2
    assert checksum().startswith("1:")
    assert not any(p.name.startswith("gone") for p in run_dir.iterdir()), len(decoys)


def test_one_process_tables_point_writes_the_scoring_points_table(tmp_path, monkeypatch):
    """Point tables-t1 (tm extract --phrase-table's C path: lexical counts, lex tables loaded, pairs as records,
    merges) writes the table score-t1 writes from the extract file of the same sentence pairs: one checksum."""
    from toy_models import aligned_corpus

    from smtbench.tm.extract import extract_files
    (tmp_path / "c").mkdir()
    d = aligned_corpus(tmp_path / "c", 40, 5)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for src, dst in (("f", "train.es"), ("e", "train.en"), ("al", "train.aligned.grow-diag-final-and"),
                     ("lex.f2e", "lex.f2e"), ("lex.e2f", "lex.e2f")):
        (inputs / dst).write_bytes((d / src).read_bytes())
    extract_files(*(str(inputs / n) for n in ("train.es", "train.en", "train.aligned.grow-diag-final-and")),
                  str(inputs / "extract"), None, max_len=7, orientation_out=str(inputs / "extract.o"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)
    points = {**counts._prepare_score(inputs), **counts._prepare_tables(inputs)}
    sums = {}
    for name in ("score-t1", "tables-t1"):
        run, checksum = points[name]
        assert run() > 100
        sums[name] = checksum()
    assert sums["score-t1"] == sums["tables-t1"] and int(sums["score-t1"].split(":")[0]) > 100, sums
    run, checksum = points["reorder-t1"]
    run()
    checksum()
