"""`tools/device-rows.sh --import DIR`: a device run's rows (DIR: the files that came back from $OUT,
device-rows.jsonl and device-outputs.tar.xz) into the experiments' raw folders, here, with this checkout's .venv:
results/raw/glm_btree/device.jsonl (gLM's rows) and results/raw/moses2_scaling/device.jsonl (the decoding sweep),
from which the report rules render glm_device and moses2_device_threads (workflow/rules/glm_btree.smk,
moses2_scaling.smk).

Checked before either file is replaced: every line a JSON row of one device run that ended (its `end` row), not a
dry run (unless --allow-dry, for the tests), the kit made from this checkout's history (its sha known to git), and
Moses2's lines at 1 thread against ours by smtbench's one identity rule (decode.compare.peer_identity, Moses2
strict). Each row gains what the reports' like-for-like checks read: run_id (the device run), clock (wall),
machine_cpu / machine_cores / machine_gpu. Both files are published together (temp + rename, after both are
written: smtbench.ioutil.atomic_open). A bad file is refused in one line naming it and the line."""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ("glm_btree", "moses2_scaling")


class Refused(Exception):
    pass


def read(path: Path, allow_dry: bool) -> list[dict]:
    rows = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"{path}: {exc}") from None
    for i, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise Refused(f"{path}:{i}: not a JSON row ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("device_run"), str) or "kind" not in row:
            raise Refused(f"{path}:{i}: not a device row (tools/device/rows.py writes them)")
        if row.get("dry") and not allow_dry:
            raise Refused(f"{path}:{i}: a dry run's row (tools/device-rows.sh --dry): only a device run's rows are "
                          "committed")
        if row["kind"] not in ("run", "end") and row.get("experiment") not in EXPERIMENTS:
            raise Refused(f"{path}:{i}: experiment {row.get('experiment')!r}: not one of {', '.join(EXPERIMENTS)}")
        rows.append(row)
    if not rows:
        raise Refused(f"{path}: no rows")
    runs = {r["device_run"] for r in rows}
    if len(runs) > 1:
        raise Refused(f"{path}: rows of {len(runs)} device runs ({', '.join(sorted(runs))}): import one run")
    if rows[-1]["kind"] != "end":
        raise Refused(f"{path}:{len(text.splitlines())}: the run did not end (no 'end' row): a cut-off run is not "
                      "imported")
    return rows


def check_identity(rows: list[dict], outputs: Path) -> dict | None:
    """Moses2 at 1 thread against ours (the returned outputs) by the one identity rule; None without Moses2."""
    from smtbench.decode.compare import line_decimals, peer_identity, printed_digits
    from smtbench.decode.moses_run import score_lines

    if not any(r.get("kind") == "peer" and r.get("system") == "moses2" and r.get("status") == "ok" for r in rows):
        return None
    if not outputs.is_file():
        raise Refused(f"{outputs}: missing (Moses2's and our lines at 1 thread come back in it)")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with tarfile.open(outputs) as tf:
                tf.extractall(tmp, filter="data")
            ours = Path(tmp, "ours-t1.out").read_text(encoding="utf-8").split("\n")[:-1]
            ours_scores = [float(x) for x in Path(tmp, "ours-t1.scores").read_text().split()]
            raw = Path(tmp, "moses2-t1.out").read_text(encoding="utf-8").split("\n")[:-1]
        except (OSError, tarfile.TarError, ValueError, UnicodeDecodeError) as exc:
            raise Refused(f"{outputs}: {exc}") from None
    theirs, theirs_scores, printed = score_lines(raw, f"{outputs}: moses2-t1.out")
    ident = peer_identity("moses2", ours, ours_scores, theirs, theirs_scores, digits=printed_digits(printed) or 3,
                          line_digits=line_decimals(printed), where=str(outputs), strict=True)
    return ident.as_dict("ours_vs")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="the device run's returned files (device-rows.jsonl, device-outputs.tar.xz)")
    ap.add_argument("--results", type=Path, default=ROOT / "results", help="the results folder (default: this checkout's)")
    ap.add_argument("--allow-dry", action="store_true", help="import a dry run's rows (tests only)")
    args = ap.parse_args()
    from smtbench.errors import PeerFailed, ResultMismatch
    from smtbench.ioutil import atomic_open

    try:
        rows = read(args.dir / "device-rows.jsonl", args.allow_dry)
        sha = rows[0].get("kit_sha", "").removesuffix("-dirty")
        known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True)
        if not sha or known.returncode:
            raise Refused(f"{args.dir / 'device-rows.jsonl'}: kit sha {sha!r} is not a commit of this checkout "
                          "(prepare the kit here, from a committed state)")
        identity = check_identity(rows, args.dir / "device-outputs.tar.xz")
    except (Refused, ResultMismatch, PeerFailed, ValueError) as exc:  # one line; ResultMismatch: Moses2 above ours
        print(f"device-rows --import: {exc}", file=sys.stderr)
        return 1
    by_exp: dict[str, list[dict]] = {e: [] for e in EXPERIMENTS}
    for r in rows:
        r = {**r, "run_id": r["device_run"], "clock": "wall", "machine_cpu": r.get("cpu_model"),
             "machine_cores": r.get("cores"), "machine_gpu": r.get("gpu")}
        r.pop("kit", None)
        if r["kind"] in ("run", "end"):
            for e in EXPERIMENTS:
                by_exp[e].append({**r, "experiment": e})
        else:
            if identity and r["experiment"] == "moses2_scaling" and r["kind"] == "peer" and r.get("system") == "moses2" \
                    and r.get("threads") == 1:
                r.update(identity)
            by_exp[r["experiment"]].append(r)
    with contextlib.ExitStack() as stack:  # both files under temporary names, renamed together at the end
        for e, rs in by_exp.items():
            (args.results / "raw" / e).mkdir(parents=True, exist_ok=True)
            fh = stack.enter_context(atomic_open(args.results / "raw" / e / "device.jsonl"))
            fh.write("".join(json.dumps(r) + "\n" for r in rs))
    print(f"device-rows --import: {len(rows)} rows of {rows[0]['device_run']} into "
          + ", ".join(str(args.results / "raw" / e / "device.jsonl") for e in EXPERIMENTS), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
