"""The cluster path against a real SLURM (`make test-slurm` starts one with tools/slurm-local.sh): the workflow's
sharded-decoding rules (workflow/rules/decode_shards.smk) run through the Snakemake SLURM executor, every shard its
own SLURM job, and the merged outputs equal one unsharded job byte for byte; a job cancelled by `scancel` while it
writes, and a job killed by SLURM at its time limit, leave no partial output under a final name, and the next run
completes them with identical output.
Without a reachable SLURM (or without the executor plugin) these tests skip, saying how to get one; under
`make test-slurm` (SMTBENCH_REQUIRE_SLURM=1) they fail instead."""
from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTITION = os.environ.get("SMTBENCH_SLURM_PARTITION", "local")  # tools/slurm-local.sh's


def _slurm_env() -> dict[str, str]:
    env = dict(os.environ)
    local = Path(f"/tmp/smtbench-slurm-{os.getuid()}/slurm.conf")  # tools/slurm-local.sh's default
    if "SLURM_CONF" not in env and local.exists():
        env["SLURM_CONF"] = str(local)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # smtbench in the jobs
    return env


def _unavailable() -> str | None:
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "pip install -e '.[slurm]' for the SLURM executor plugin"
    if shutil.which("sbatch") is None:
        return "no SLURM client (apt-get install slurm-wlm munge; `make test-slurm` starts a local SLURM)"
    try:
        r = subprocess.run(["sinfo", "-h", "-p", PARTITION, "-o", "%t"], capture_output=True, text=True, timeout=20,
                           env=_slurm_env())
    except subprocess.TimeoutExpired:
        return "sinfo timed out"
    if r.returncode != 0 or not any(s.rstrip("*~#") in ("idle", "mix", "alloc") for s in r.stdout.split()):
        said = ((r.stderr or r.stdout).strip().splitlines() or [""])[-1][:200]
        return (f"no SLURM node up in partition {PARTITION!r} ({said}); "
                "`make test-slurm` or tools/slurm-local.sh start")
    return None


REASON = _unavailable()
if REASON and os.environ.get("SMTBENCH_REQUIRE_SLURM") == "1":
    raise RuntimeError(f"SMTBENCH_REQUIRE_SLURM=1 but {REASON}")
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

CONFIG = {"shards": 3, "sentences": 0, "searches": ["normal", "cube"], "stack_size": 100, "pop_limit": 100,
          "nbest": 100}
TARGET = "out/tables/decode_shards.md"


def _workflow(d: Path, small_trained) -> Path:
    """A workdir whose Snakefile includes the workflow's own decode_shards.smk with the names it takes from the
    Snakefile above it (GRID, OUT, TM, CONDA_ENV, ALL, METRICS); the model and the dev set are the small trained ones."""
    ini, dev, _ = small_trained
    (d / "work" / "data").mkdir(parents=True)
    (d / "work" / "data" / "dev.es").write_text("".join(x + "\n" for x in dev), encoding="utf-8")
    (d / "tm").mkdir()
    (d / "tm" / "model-dev").symlink_to(ini.parent)
    (d / "Snakefile").write_text(
        "from pathlib import Path\n"
        f"GRID = {{'decode_shards': {CONFIG!r}}}\n"
        "OUT, TM, ALL, METRICS = 'out', 'tm', [], []\n"
        f"CONDA_ENV = {str(ROOT / 'workflow' / 'envs' / 'smtbench.yaml')!r}\n"
        f"include: {str(ROOT / 'workflow' / 'rules' / 'decode_shards.smk')!r}\n")
    return d


def _snakemake(d: Path, *extra: str, targets: tuple[str, ...] = (TARGET,)) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "snakemake", "--executor", "slurm", "--jobs", "8", "--default-resources",
           f"slurm_partition='{PARTITION}'", "mem_mb=1000", "runtime=20", "--slurm-no-account",
           "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
           "--latency-wait", "10", *extra, "--rerun-incomplete", *targets]  # a flag ends extra's list options
    return subprocess.Popen(cmd, cwd=d, env=_slurm_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@contextmanager
def _running(d: Path, *extra: str, targets: tuple[str, ...] = (TARGET,)) -> Iterator[subprocess.Popen]:
    """_snakemake's process, stopped if the block leaves it running (a failed assertion, a timeout): SIGTERM, on
    which snakemake cancels its SLURM jobs, then SIGKILL after two minutes; never a run left behind."""
    p = _snakemake(d, *extra, targets=targets)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.terminate()
            try:
                p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()


def _jobs(since: int) -> list[tuple[int, str, str]]:
    """(id, state, comment) of the SLURM jobs with an id above ``since`` (finished ones too: MinJobAge)."""
    r = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%T|%k"], capture_output=True, text=True,
                       env=_slurm_env(), check=True)
    out = []
    for line in r.stdout.split():
        i, state, comment = line.split("|", 2)
        if int(i) > since:
            out.append((int(i), state, comment))
    return out


def _last_job() -> int:
    return max((i for i, _, _ in _jobs(0)), default=0)


def _outputs(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted((d / "out" / "decode_shards").rglob("*"))
            if p.is_file() and p.suffix in (".out", ".scores", ".nbest")}


def _writer(tmp: Path) -> int | None:
    """The process holding ``tmp`` open (the decoder writing it), if any."""
    real = os.path.realpath(tmp)
    for fds in Path("/proc").glob("[0-9]*/fd"):
        with suppress(OSError):  # a process that ended meanwhile, or one not ours
            if any(os.readlink(fd) == real for fd in fds.iterdir()):
                return int(fds.parent.name)
    return None


def _check_killed(d: Path, writing: list[Path], full: dict[str, bytes], left: list[Path] | None = None) -> None:
    """After a job killed while it wrote ``writing`` (temporary files): nothing partial under a final name (no
    temporary file left but ``left``, whatever final output exists is the uninterrupted run's), and one at least
    was cut off."""
    outdir = d / "out" / "decode_shards"
    assert sorted(outdir.rglob("*.tmp")) == sorted(left or []), list(outdir.rglob("*.tmp"))
    for name, data in _outputs(d).items():
        assert data == full[name], f"{name}: a partial or different output under its final name"
    seen = [str(t.parent / t.name[1:].rsplit(".", 4)[0]) for t in writing]  # .whole.out.HOST.PID.abc.tmp -> whole.out
    assert seen and not all(Path(s).exists() for s in seen), seen  # at least one was cut off, not published


def _resume(d: Path, full: dict[str, bytes], targets: tuple[str, ...] = (TARGET,)) -> None:
    """The next run (default run time) completes the killed work with the uninterrupted run's bytes."""
    with _running(d, targets=targets) as p:
        log, _ = p.communicate(timeout=1200)
    assert p.returncode == 0, log[-4000:]
    assert _outputs(d) == (full if targets == (TARGET,) else {t: full[t] for t in targets})


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, small_trained):
    """The sharded decode run once through SLURM without interruption: (workdir, its outputs, its SLURM jobs)."""
    d = _workflow(tmp_path_factory.mktemp("slurm-run"), small_trained)
    since = _last_job()
    with _running(d) as p:
        log, _ = p.communicate(timeout=1200)
    assert p.returncode == 0, log[-4000:]
    return d, _outputs(d), _jobs(since)


def test_sharded_decode_as_slurm_jobs_equals_one_job(uninterrupted) -> None:
    d, outputs, jobs = uninterrupted
    # every shard of every search and each one-job run was its own SLURM job, and completed
    decode = [(i, s) for i, s, c in jobs if c.startswith("rule_decode_shard_wildcards")]
    assert len(decode) == len(CONFIG["searches"]) * (CONFIG["shards"] + 1), jobs
    assert {s for _, s in decode} == {"COMPLETED"}
    assert any(c.startswith("rule_decode_shards_merge") for _, _, c in jobs)
    # report decode_shards (rule decode_shards_check) passed: byte-identical; checked here again on the files
    for search in CONFIG["searches"]:
        for ext in ("out", "scores", "nbest"):
            merged = outputs[f"out/decode_shards/{search}/merged.{ext}"]
            assert merged and merged == outputs[f"out/decode_shards/{search}/whole.{ext}"], (search, ext)
    nbest = outputs["out/decode_shards/normal/merged.nbest"].decode().splitlines()
    assert sorted({int(x.split(" ||| ")[0]) for x in nbest}) == list(range(40))  # global ids, every sentence
    assert "| identical" in (d / "out" / "tables" / "decode_shards.md").read_text()


def test_cancelled_job_leaves_no_partial_output_and_resumes(tmp_path, small_trained, uninterrupted) -> None:
    d = _workflow(tmp_path, small_trained)
    since = _last_job()
    outdir = d / "out" / "decode_shards"
    cancelled: list[int] = []
    writing: list[Path] = []
    with _running(d) as p:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and p.poll() is None and not cancelled:
            writing = [t for t in outdir.rglob(".*.tmp")] if outdir.exists() else []
            if writing:  # a decoder is writing its outputs: cancel every running decode job now
                cancelled = [i for i, s, c in _jobs(since) if s == "RUNNING" and c.startswith("rule_decode_shard_")]
                if cancelled:
                    subprocess.run(["scancel", *map(str, cancelled)], env=_slurm_env(), check=True)
            time.sleep(0.05)
        log, _ = p.communicate(timeout=900)
    assert cancelled, "no decode job was caught writing (all finished first?)\n" + log[-3000:]
    assert p.returncode != 0, log[-3000:]
    states = {i: s for i, s, _ in _jobs(since)}
    assert all(states.get(i) == "CANCELLED" for i in cancelled), states
    # nothing partial under a final name: no temporary file left, and whatever final output exists is complete
    _check_killed(d, writing, uninterrupted[1])
    _resume(d, uninterrupted[1])


@contextmanager
def _resumed(pid: Callable[[], int | None]) -> Iterator[None]:
    """SIGCONT to the process ``pid()`` names, if any, when the block ends: SLURM will have killed it; if not (a
    failure in the block), it goes on and ends at its limit."""
    try:
        yield
    finally:
        stopped = pid()
        if stopped is not None:
            with suppress(ProcessLookupError):
                os.kill(stopped, signal.SIGCONT)


# the one-job decode of one search: split, then this single job (all three outputs come from it)
WHOLE = tuple(f"out/decode_shards/normal/whole.{ext}" for ext in ("out", "scores", "nbest"))


def test_job_killed_at_time_limit_leaves_no_partial_output_and_resumes(tmp_path, small_trained,
                                                                      uninterrupted) -> None:
    """A decode job given SLURM's smallest time limit (runtime=1: `sbatch -t 1`, one minute) outlasts it: caught
    writing its outputs, the decoder is stopped (SIGSTOP: a hung job, using no core while SLURM's clock runs on).
    SLURM ends the job at its limit (state TIMEOUT): no output appears under a final name, and the next run, with
    the default run time, completes it with the uninterrupted run's bytes. A hung writer never runs its SIGTERM
    cleanup (SLURM's SIGKILL ends it), so its hidden temporaries (.whole.out.HOST.PID.XXXXXX.tmp) stay, and only
    those, until the next run's writes of the same outputs remove them (their process is gone).
    Costs SLURM's minute, its 30 s time-limit sweep and the executor's status-check back-off: about 3 minutes."""
    d = _workflow(tmp_path, small_trained)
    since = _last_job()
    search = d / "out" / "decode_shards" / "normal"
    hung: int | None = None
    writing: list[Path] = []
    with _running(d, "--set-resources", "decode_shard:runtime=1", targets=WHOLE) as p, _resumed(lambda: hung):
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and p.poll() is None and hung is None:
            writing = list(search.glob(".whole.*.tmp")) if search.exists() else []  # the decoder's, not split's
            pid = _writer(writing[0]) if writing else None
            if pid is not None:
                os.kill(pid, signal.SIGSTOP)
                if all(t.exists() for t in writing):  # stopped while writing, not after it published
                    hung = pid
                else:
                    os.kill(pid, signal.SIGCONT)
            time.sleep(0.05)
        log, _ = p.communicate(timeout=600)
    assert hung is not None, "the decode job was not caught writing (finished first?)\n" + log[-3000:]
    assert p.returncode != 0, log[-3000:]
    decode = [s for _, s, c in _jobs(since) if c.startswith("rule_decode_shard_")]
    assert decode == ["TIMEOUT"], (decode, log[-3000:])
    assert not Path(f"/proc/{hung}").exists(), f"the stopped decoder {hung} outlived its job"
    assert not any((d / w).exists() for w in WHOLE)
    _check_killed(d, writing, uninterrupted[1], left=writing)
    _resume(d, uninterrupted[1], WHOLE)
    assert not [t for t in writing if t.exists()], writing  # the next run's writes removed the killed writer's temps
