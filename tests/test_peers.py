"""Peers as data (issue 39): a live peer is one entry of config/peers.yaml (smtbench.peers). The README's "Benchmark
your own system" example run as written (its program a stand-in: our own decoder under another name, on the small
model the tests train): the peer appears in the decode table with its ratio and identity count. Plus the entry's
other ways of reading output (score files, n-best lists, {input}/{output} files, a loading command), a peer that is
not there, the one-line errors of a bad peers file, and Moses2 / Moses v1 as entries (the commands the bench ran
before they were data)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from smtbench import peers
from smtbench.decode import moses_run

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def _readme_example() -> tuple[str, str]:
    """The yaml entry and the shell commands of the README's "Benchmark your own system"."""
    sec = (ROOT / "README.md").read_text(encoding="utf-8").split("## Benchmark your own system", 1)[1]
    sec = sec.split("\n## ", 1)[0]
    y = re.search(r"```yaml\n(.*?)```", sec, re.S)
    sh = re.search(r"```sh\n(.*?)```", sec, re.S)
    assert y and sh, "README: 'Benchmark your own system' needs a ```yaml entry and a ```sh block"
    return y.group(1), sh.group(1)


def _run_sh(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "SMTBENCH_PROGRESS": "0", **env}
    r = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{script}\n--- stderr\n{r.stderr[-3000:]}"
    return r


def _md_rows(path: Path) -> dict[str, dict[str, str]]:
    """A rendered markdown table's rows by their first cell."""
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return {cells[0]: dict(zip(head, cells)) for cells in
            ([c.strip() for c in x.strip("|").split("|")] for x in lines[2:])}


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_readme_example_peer_appears_in_the_decode_table(small_trained, tmp_path):
    """The README's entry and commands as written, with the stand-in program and the small model (its dev verses 5
    times over: enough decoding that each system's time beyond its one-line loading run is well above a loaded
    machine's start-up noise) and one repeat: the decode table has the peer's row with its ratio and identity count
    (our decoder under another name: every line identical). Moses2 is pointed at an empty folder (its row: not
    built); tests/test_moses_peer.py runs it live."""
    ini, _, ref = small_trained
    entry, script = _readme_example()
    toy = tmp_path / "mydecoder"  # takes the README's Moses-style flags: -f INI -s STACK -threads N
    toy.write_text(f'#!/bin/sh\nexec "{PY}" -m smtbench.cli decode normal -f "$2" -s "$4" --no-progress\n')
    toy.chmod(0o755)
    assert "/path/to/mydecoder" in entry and len(entry.strip().splitlines()) == 1  # one config entry
    (tmp_path / "mypeers.yaml").write_text(entry.replace("/path/to/mydecoder", str(toy)))
    dev = (ini.parent.parent / "dev.es").read_text(encoding="utf-8").splitlines()
    refs = ref.read_text(encoding="utf-8").splitlines()
    (tmp_path / "test.src").write_text("".join(x + "\n" for x in dev * 5), encoding="utf-8")
    (tmp_path / "test.ref").write_text("".join(x + "\n" for x in refs * 5), encoding="utf-8")
    n = 5 * len(dev)
    for a, b in [("model/moses.ini", str(ini)), ("--repeats 3", "--repeats 1 --nbest 1 -s 100 --spell-probe-mib 0")]:
        assert a in script, f"README example no longer contains {a!r}"
        script = script.replace(a, b)
    (tmp_path / "no-moses").mkdir()
    _run_sh(script, tmp_path, SMTBENCH_MOSES_BIN=str(tmp_path / "no-moses"))
    table = _md_rows(tmp_path / "bench.md")
    mine = table["mydecoder, normal search, -s 100"]
    assert mine["status"] == "ok"
    assert int(mine["identical_with_ours"]) == n  # the identity count: our decoder under another name
    assert float(mine["ours_speedup_median"]) > 0 and int(mine["n_repeats"]) == 1  # its ratio, within the repeat
    assert mine["ours_score_ge"] == "<NA>"  # no scores printed: its text only
    assert "mydecoder" in mine["command"] and "--peers-file" in (tmp_path / "bench.md").read_text()
    assert table["Moses2, normal search, -s 100"]["status"] == "not built (make moses)"
    peer = {r["system"]: r for r in _rows(tmp_path / "bench.jsonl") if r["kind"] == "peer"}
    assert peer["mydecoder"]["identity"] == "lines" and peer["mydecoder"]["ours_vs_differing"] == 0


def test_peer_reading_score_files_with_a_loading_command(small_trained, tmp_path):
    """An entry with {input}/{output}/{scores} files, a `load` command and identity: strict (our cube pruning under
    another name: every line identical, scores tied), beside an entry whose program is not there (a row saying so)."""
    ini, _, ref = small_trained
    marker = tmp_path / "loaded.json"
    base = f"{PY} -m smtbench.cli decode cube -f {{ini}} -s {{stack}} --pop-limit {{pop_limit}} --no-progress"
    (tmp_path / "p.yaml").write_text(
        "ours2:\n"
        f"  cmd: \"{base} -i {{input}} -o {{output}} --scores {{scores}}\"\n"
        f"  load: \"{base} -i {{input}} -o {{output}} --counters {marker}\"\n"
        "  identity: strict\n  label: ours again\n"
        "ghost: {cmd: \"/nonexistent/decoder -f {ini}\"}\n")
    out = tmp_path / "rows.jsonl"
    r = subprocess.run([PY, "-m", "smtbench.cli", "bench", "moses_decode", "-f", str(ini), "--search", "cube",
                        "--pop-limit", "50", "-s", "50", "--input", str(ini.parent.parent / "dev.es"), "--reference",
                        str(ref), "--sentences", "3", "--nbest", "1", "--repeats", "1", "--spell-probe-mib", "0",
                        "--outputs", str(tmp_path / "o"), "--peers-file", str(tmp_path / "p.yaml"), "--peers",
                        "ours2,ghost", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    peer = {x["system"]: x for x in _rows(out) if x["kind"] == "peer"}
    p = peer["ours2"]
    assert (p["status"], p["identity"], p["ours_vs_identical"], p["ours_vs_score_ge"], p["ours_vs_theirs_higher"]) \
        == ("ok", "scores", 3, 3, 0)
    assert p["label"] == "ours again" and "{scores}" in p["command"]
    assert peer["ghost"]["status"] == "not found (/nonexistent/decoder)"
    assert marker.exists()  # the loading run ran the entry's `load` command
    timing = {x["system"] for x in _rows(out) if x["kind"] == "peer_timing"}
    assert timing == {"ours", "ours2"}
    r = subprocess.run([PY, "-m", "smtbench.cli", "report", "moses_decode", "--rows", str(out), "--table",
                        str(tmp_path / "t")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    table = _md_rows(tmp_path / "t.md")
    assert table["ours again, cube pruning, pop limit 50, -s 50"]["identical_with_ours"] == "3"
    assert table["ghost, cube pruning, pop limit 50, -s 50"]["status"] == "not found (/nonexistent/decoder)"


def test_nbest_scores_and_text_only_identity(tmp_path):
    """A peer's scores from its {nbest} file (each sentence's first entry); without scores, lines only."""
    prog = tmp_path / "peer.py"
    prog.write_text("import sys\nn = len(sys.stdin.read().splitlines())\n"
                    "open(sys.argv[1], 'w').write(''.join(f'{i} ||| h{i} ||| F0= 1 ||| -{i}.25\\n'"
                    "f'{i} ||| worse ||| F0= 1 ||| -9\\n' for i in range(n)))\n"
                    "print('\\n'.join(f'h{i}' for i in range(n)))\n")
    inp = tmp_path / "in"
    inp.write_text("x\ny\nz\n")
    r = moses_run.run(moses_run.Decoder("p", [PY, str(prog), "{nbest}"], str(tmp_path), output="lines"), inp)
    assert r.lines == ["h0", "h1", "h2"] and r.scores == [-0.25, -1.25, -2.25] and r.digits == 2
    r = moses_run.run(moses_run.Decoder("p", [PY, str(prog), str(tmp_path / "nb")], str(tmp_path), output="lines"),
                      inp)
    assert r.scores is None  # no {scores}/{nbest}, output: lines: the bench checks its text only


def test_moses_entries_run_the_commands_the_bench_ran(tmp_path, monkeypatch):
    """config/peers.yaml's moses2 / moses give the command lines `bench moses_decode` ran before peers were data,
    and the entries' strict identity is decode.compare's default for them."""
    from smtbench.decode.compare import STRICT_PEERS

    for prog in ("moses2", "moses"):
        (tmp_path / prog).write_text("#!/bin/sh\n")
        (tmp_path / prog).chmod(0o755)
    monkeypatch.setenv("SMTBENCH_MOSES_BIN", str(tmp_path))
    reg = peers.load()
    assert {"moses2", "moses"} <= set(reg)
    assert {p.name for p in reg.values() if p.strict} == set(STRICT_PEERS)
    ini = (tmp_path / "m" / "moses.ini").resolve()
    for prog in ("moses2", "moses"):
        common = [str(tmp_path / prog), "-f", str(ini), "-v", "0", "-threads", "2"]
        d = moses_run.moses_decoder(prog, ini, "normal", 200, threads=2)
        assert d.argv == common + ["-search-algorithm", "0", "-s", "200", "-output-hypo-score"]
        d = moses_run.moses_decoder(prog, ini, "cube", 400, 400, threads=2)
        assert d.argv == common + ["-search-algorithm", "1", "-s", "400", "-output-hypo-score",
                                   "-cube-pruning-pop-limit", "400"]
        assert d.cwd == str(ini.parent) and d.output == "score-lines"


@pytest.mark.parametrize("text, message", [
    ("a: {cmd: \"x -f {ini}\"}\nb: {cmd: \"y\", colour: red}\n", ":2: peer b: unknown key(s) colour"),
    ("a:\n  cmd: \"x -f {model}\"\n", ":1: peer a: cmd: unknown placeholder {model}"),
    ("a: {cmd: \"x -f {ini}\", identity: strict}\n", ":1: peer a: identity: strict needs the peer's model scores"),
    ("a: {label: x}\n", ":1: peer a: cmd: missing"),
    ("ours: {cmd: \"x\"}\n", ":1: peer ours: the name 'ours'"),
    ("a: {cmd: \"x\", build: moses, output: scores}\n", ":1: peer a: output: 'scores'"),
    ("a: [\n", ": not YAML"),
])
def test_bad_peers_file_is_one_line_naming_file_and_line(tmp_path, text, message):
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(peers.PeersFileError) as e:
        peers.read(f)
    assert str(e.value).startswith(str(f)) and message in str(e.value) and "\n" not in str(e.value)


def test_unknown_peer_is_refused_before_any_work(tmp_path):
    out = tmp_path / "rows.jsonl"
    r = subprocess.run([PY, "-m", "smtbench.cli", "bench", "moses_decode", "-f", str(tmp_path / "none.ini"),
                        "--input", "x", "--reference", "y", "--outputs", str(tmp_path / "o"), "--peers",
                        "moses2,nosuch", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--peers nosuch: no such peer" in r.stderr
    assert not out.exists()


def test_the_grid_names_any_declared_peer_and_refuses_others_in_one_line(tmp_path):
    """moses_decode.peers / weights_peers take any peer name (the schema checks its spelling only, the names are
    data); the workflow refuses, at load, a name config/peers.yaml does not declare, in one line naming it."""
    import jsonschema
    import yaml
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    moses_decode = schema["$defs"]["moses_decode"]["properties"]
    names = {**schema["$defs"]["peer_names"], "$defs": schema["$defs"]}
    jsonschema.validate(["moses2", "mydecoder", "my-decoder.v2"], names)
    for bad in (["my decoder"], ["2dec"], [""]):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, names)
    for key in ("normal", "cube"):
        assert moses_decode["peers"]["properties"][key]["$ref"] == "#/$defs/peer_names"
    assert moses_decode["weights_peers"]["$ref"] == "#/$defs/peer_names"
    grid = yaml.safe_load((ROOT / "config" / "default.yaml").read_text())
    grid["moses_decode"].setdefault("peers", {})["cube"] = ["moses2", "mydecoder"]
    cfg = tmp_path / "grid.yaml"
    cfg.write_text(yaml.safe_dump(grid))
    r = subprocess.run(["snakemake", "--cores", "1", "-n", "--nolock", "--configfile", str(cfg)], cwd=ROOT,
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    line = next(x for x in out.splitlines() if x.startswith("moses_decode.peers.cube: mydecoder: "))
    assert "not an entry of" in line and "peers.yaml" in line and "moses2" in line
