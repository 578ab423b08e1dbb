"""The device rows of issue 43 (tools/device-rows.sh runs this; standard library only: the device machine has Python
3.12 without our package's cffi, and this machine's 3.11 runs it in the dry mode and the test).

From the kit that ``tools/device-rows.sh --prepare`` made here (kit.json and its files) and the programs the script
built (``device_rows`` over csrc/, with CUDA where nvcc is), it writes JSON rows to OUT/device-rows.jsonl:
- ``glm``: gLM's B-tree on the kit's 5-gram LM and text (``device_rows glm``): the CPU batch at 1 thread and at every
  core, the CUDA kernel alone and with its copies, repeats interleaved; the GPU's answers equal the CPU's bit for
  bit (the program stops otherwise). Without a GPU: one row saying why (the dry mode here).
- ``decode``: our cube pruning (``device_rows decode``) and Moses2 (the kit's binary) on the same model, input, pop
  limit, stack size and thread count, each a process timed as the workflow times them
  (smtbench.experiments.harness.loading_subtracted: the whole input's wall time minus the first line's, one after
  the other in the same repeat), thread counts and systems interleaved within each repeat (the order reversed
  every other repeat). Before timing, every thread count's output of ours must equal ours at 1 thread line for
  line; Moses2's lines are compared with ours (identical, and lines Moses2 scores above ours: Moses2's search is
  the one csrc/pb follows, so a line above ours is a bug of ours: the run stops).
Every row carries the machine (GPU, CPU model, cores, kernel), the kit's git sha and the build's flags. Stops
starting repeats once ``--budget`` seconds are spent (rows say how many ran)."""
from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path


class Fail(Exception):
    pass


def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = None
    if shutil.which("nvidia-smi"):
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True)
        gpu = r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else None
    return {"host": platform.node(), "cpu_model": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "gpu": gpu, "loadavg": os.getloadavg()[0]}


def unpack(src: Path, dst: Path) -> Path:
    """``src`` (.xz, .gz or plain) as a plain file ``dst`` (once)."""
    if not dst.exists():
        opener = lzma.open if src.suffix == ".xz" else gzip.open if src.suffix == ".gz" else open
        with opener(src, "rb") as fi, open(f"{dst}.tmp", "wb") as fo:
            shutil.copyfileobj(fi, fo, 1 << 20)
        os.replace(f"{dst}.tmp", dst)
    return dst


def timed(argv: list[str], stdin: Path, cwd: Path, keep: Path | None) -> float:
    with open(stdin, "rb") as fi, open(keep if keep else os.devnull, "wb") as fo:
        t0 = time.perf_counter()
        r = subprocess.run(argv, stdin=fi, stdout=fo, stderr=subprocess.PIPE, cwd=cwd)
        wall = time.perf_counter() - t0
    if r.returncode:
        raise Fail(f"{' '.join(argv)} < {stdin}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()[-800:]}")
    return wall


def score_lines(path: Path) -> tuple[list[str], list[float]]:
    """Moses2's -output-hypo-score lines: 'SCORE HYP'."""
    lines, scores = [], []
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n")[:-1]):
        score, _, hyp = line.strip().partition(" ")
        try:
            scores.append(float(score))
        except ValueError:
            raise Fail(f"{path}:{i + 1}: not 'SCORE HYP': {line[:80]!r}") from None
        lines.append(hyp.strip())
    return lines, scores


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kit", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--bin", required=True, help="device_rows (built by tools/device-rows.sh)")
    ap.add_argument("--build", default="", help="how device_rows was built (flags), recorded in every row")
    ap.add_argument("--gpu", action="store_true", help="device_rows has CUDA: time the GPU rows")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--sentences", type=int, default=0, help="decode the input's first N lines (0: kit.json's)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-queries", type=int, default=0, help="gLM queries (0: kit.json's)")
    ap.add_argument("--budget", type=float, default=240.0, help="seconds after which no repeat starts")
    ap.add_argument("--dry", action="store_true", help="the CPU part here (tools/device-rows.sh --dry)")
    args = ap.parse_args()
    try:
        return run(args)
    except (Fail, OSError, ValueError) as exc:
        print(f"device-rows: {exc}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()
    kit = json.loads((args.kit / "kit.json").read_text())
    try:
        threads = sorted({int(t) for t in args.threads.split(",")})
    except ValueError:
        raise Fail(f"--threads {args.threads}: comma-separated integers") from None
    if not threads or threads[0] < 1 or threads[-1] > 256:
        raise Fail(f"--threads {args.threads}: each in 1..256")
    if args.repeats < 1 or args.sentences < 0 or args.budget <= 0:
        raise Fail("--repeats >= 1, --sentences >= 0 and --budget > 0")
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    m = machine()
    common = {"device_run": kit["run_id"], "kit_sha": kit["git_sha"], "dry": args.dry, "build": args.build, **m}
    rows_path = args.out / "device-rows.jsonl"
    out = open(rows_path, "w", encoding="utf-8")

    def emit(**kw) -> None:
        out.write(json.dumps({**common, **kw}) + "\n")
        out.flush()

    emit(kind="run", kit=kit, threads=threads, repeats=args.repeats, budget_s=args.budget)
    lm = unpack(args.kit / kit["lm"], args.work / "lm.arpa")

    # ---- gLM's B-tree: CPU at 1 and all cores, the GPU kernel and with copies
    print(f"device-rows: glm ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)
    argv = [args.bin, "glm", "--lm", str(lm), "--text", str(args.kit / kit["glm_text"]), "--node-size",
            str(kit["node_size"]), "--min-queries", str(args.min_queries or kit["min_queries"]),
            "--repeats", str(kit["glm_repeats"]), "--threads", str(os.cpu_count() or 1)] + (["--gpu"] if args.gpu else [])
    r = subprocess.run(argv, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        emit(experiment="glm_btree", **json.loads(line))
    if r.returncode:
        raise Fail(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    if not args.gpu:
        emit(experiment="glm_btree", kind="glm_gpu", available=False,
             reason="dry run" if args.dry else "the CUDA build failed (its log)" if "CUDA build failed" in args.build
             else "device_rows built without CUDA (no nvcc)")

    # ---- decoding: ours and Moses2, same model and input, 1..16 threads
    print(f"device-rows: decode ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)
    pt = args.kit / kit["phrase_table"]
    rt = args.kit / kit["reordering_table"]
    pt_plain, rt_plain = unpack(pt, args.work / "pt"), unpack(rt, args.work / "rt")
    n = args.sentences or kit["sentences"]
    src = (args.kit / kit["input"]).read_text(encoding="utf-8").split("\n")[:-1][:n]
    inp, one = args.work / "input", args.work / "one"
    inp.write_text("".join(s + "\n" for s in src), encoding="utf-8")
    one.write_text(src[0] + "\n", encoding="utf-8")
    words = sum(len(s.split()) for s in src[1:])
    d = kit["decode"]
    ours = [args.bin, "decode", "--lm", str(lm), "--phrases", str(pt_plain), "--reordering", str(rt_plain),
            "--weights", ",".join(repr(w) for w in d["weights"]), "--table-limit", str(d["table_limit"]),
            "--distortion-limit", str(d["distortion_limit"]), "--beam-threshold", repr(d["beam_threshold"]),
            "--pop-limit", str(d["pop_limit"]), "-s", str(d["stack_size"])]
    ini = args.work / "moses.ini"
    ini.write_text((args.kit / kit["moses_ini"]).read_text().replace("@LM@", str(lm)).replace(
        "@PT@", str(pt_plain)).replace("@RT@", str(rt_plain)))
    moses2 = None
    if kit.get("moses2"):
        exe = str((args.kit / kit["moses2"]).resolve())
        os.chmod(exe, 0o755)
        exe_argv = [exe]
        moses2 = exe_argv + ["-f", str(ini), "-v", "0", "-search-algorithm", "1", "-s", str(d["stack_size"]),
                             "-output-hypo-score", "-cube-pruning-pop-limit", str(d["pop_limit"])]
        try:  # one line first: a Moses2 that cannot start there (its libraries) leaves our rows to run, said so
            timed(moses2 + ["-threads", "1"], one, args.work, args.work / "moses2-probe.out")
        except Fail as exc:
            emit(experiment="moses2_scaling", kind="peer", system="moses2", status=f"failed to start: {exc}"[:600])
            moses2 = None
    else:
        emit(experiment="moses2_scaling", kind="peer", system="moses2", status="not in the kit (make moses)")

    def argv_of(system: str, t: int) -> list[str]:
        return ours + ["--threads", str(t)] if system == "ours" else moses2 + ["-threads", str(t)]

    systems = ["ours"] + (["moses2"] if moses2 else [])
    fields = {"experiment": "moses2_scaling", "sentences": len(src), "timed_words": words,
              "pop_limit": d["pop_limit"], "stack_size": d["stack_size"]}
    # identity first: every thread count of ours equals ours at 1 thread; Moses2 against ours
    ref = args.work / "ours-t1.out"
    timed(argv_of("ours", 1) + ["--scores", str(args.work / "ours-t1.scores")], inp, args.work, ref)
    ref_lines = ref.read_text(encoding="utf-8").split("\n")[:-1]
    ref_scores = [float(x) for x in (args.work / "ours-t1.scores").read_text().split()]
    if len(ref_lines) != len(src):
        raise Fail(f"ours: {len(ref_lines)} output lines for {len(src)} input lines")
    for system in systems:
        for t in threads:
            o = ref if (system, t) == ("ours", 1) else args.work / f"{system}-t{t}.out"
            if o != ref:
                timed(argv_of(system, t), inp, args.work, o)
            if system == "ours":
                same = sum(a == b for a, b in zip(o.read_text(encoding="utf-8").split("\n")[:-1], ref_lines))
                if same != len(src):
                    raise Fail(f"ours at {t} threads: {len(src) - same} lines differ from ours at 1 thread")
                emit(**fields, kind="peer", system="ours", threads=t, status="ok", identical_to_ours_t1=same)
            else:
                lines, scores = score_lines(o)
                if len(lines) != len(src):
                    raise Fail(f"moses2 at {t} threads: {len(lines)} output lines for {len(src)} input lines")
                same = sum(a == b for a, b in zip(lines, ref_lines))
                above = [i + 1 for i, (a, b) in enumerate(zip(scores, ref_scores)) if a > b + 1e-3 + 1e-6 * abs(b)]
                emit(**fields, kind="peer", system="moses2", threads=t, status="ok", identical_to_ours=same,
                     peer_scores_above_ours=len(above), first_above=above[:5])
                if above:
                    raise Fail(f"Moses2 at {t} threads scores {len(above)} lines above ours (lines {above[:5]}): a "
                               "search error of ours (csrc/pb follows Moses2's search)")
    # timing: repeats of (thread count, system) pairs, interleaved; each point whole input then first line
    points = [(t, s) for t in threads for s in systems]
    done = 0
    for rep in range(args.repeats):
        if rep and time.perf_counter() - t_start > args.budget:
            break
        print(f"device-rows: decode repeat {rep + 1}/{args.repeats} ({time.perf_counter() - t_start:.0f} s)",
              file=sys.stderr, flush=True)
        for t, system in (points if rep % 2 == 0 else points[::-1]):
            whole = timed(argv_of(system, t), inp, args.work, None)
            first = timed(argv_of(system, t), one, args.work, None)
            secs = whole - first
            emit(**fields, kind="peer_timing", system=system, threads=t, repeat=rep, wall_seconds=round(whole, 4),
                 first_line_seconds=round(first, 4), decode_seconds=round(secs, 4),
                 words_per_second=round(words / secs, 3) if secs > 0 else None)
        done += 1
    emit(kind="end", repeats_done=done, seconds=round(time.perf_counter() - t_start, 1))
    out.close()
    with tarfile.open(args.out / "device-outputs.tar.xz", "w:xz") as tf:  # ours and Moses2's lines at 1 thread
        for name in ("ours-t1.out", "ours-t1.scores", "moses2-t1.out"):
            if (args.work / name).exists():
                tf.add(args.work / name, arcname=name)
    print(f"device-rows: {rows_path} ({done} repeats, {time.perf_counter() - t_start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
