"""`tools/device-rows.sh --prepare`: the kit the device rows need (run here, with this checkout's .venv).

The device machine gets the working tree (64 MiB in all with what is carried) and nothing else: no ../shared, no
Moses build, no package index. The kit is the folder it carries (``.device-kit/``, ignored by git): the Moses
oracle's model (its 5-gram ARPA as shipped, .xz; its dev-filtered phrase and reordering tables recompressed with
xz), its dev verses (Spanish: the decoders' input; English: the gLM rows' query text), Moses2's binary from
build/moses (stripped; it loads the device's own libc and libstdc++, newer than this machine's glibc 2.36 and gcc 12's), the moses.ini it decodes with,
and kit.json: the weights in csrc/pb's feature order, the search options (config/default.yaml's moses2_scaling: pop
limit, stack size) and the gLM options (glm_btree's node size), the git sha. Refuses in one line when the oracle is
missing (the rows are of its model)."""
from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kit", type=Path, default=ROOT / ".device-kit")
    ap.add_argument("--oracle", type=Path, default=None,
                    help="the Moses oracle's folder (default: $SMTBENCH_SHARED/oracles/moses-bible-dev, else "
                         "../shared/oracles/moses-bible-dev)")
    ap.add_argument("--sentences", type=int, default=500, help="dev verses each timed run decodes")
    ap.add_argument("--no-moses2", action="store_true", help="leave Moses2 out (our rows only)")
    args = ap.parse_args()
    shared = Path(os.environ.get("SMTBENCH_SHARED", ROOT.parent / "shared"))
    oracle = args.oracle or shared / "oracles" / "moses-bible-dev"
    need = ["moses.ini", "lm-en5.arpa.xz", "phrase-table.dev.gz", "reordering-table.dev.gz", "dev.es", "dev.en"]
    missing = [n for n in need if not (oracle / n).is_file()]
    if missing:
        print(f"device-rows --prepare: {oracle}: {', '.join(missing)} missing (the rows use the Moses oracle's "
              "model; give --oracle or SMTBENCH_SHARED)", file=sys.stderr)
        return 1
    if args.sentences < 2:
        print(f"device-rows --prepare: --sentences {args.sentences}: at least 2 (the first line is subtracted)",
              file=sys.stderr)
        return 2
    import yaml

    from smtbench.decode.ini import load_ini
    from smtbench.decode.model import INTERNAL
    from smtbench.moses_peer import bin_dir

    cfg = yaml.safe_load((ROOT / "config" / "default.yaml").read_text())
    ini = load_ini(oracle / "moses.ini")
    by_kind = {f.kind: f for f in ini.features}
    tm = ini.feature("PhraseDictionaryMemory")
    tmp = args.kit.with_name(args.kit.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for n in ("lm-en5.arpa.xz", "dev.es", "dev.en"):
        shutil.copyfile(oracle / n, tmp / n)
    for n in ("phrase-table.dev", "reordering-table.dev"):  # xz carries them in 5.5 MiB where gzip took 7.6
        with gzip.open(oracle / f"{n}.gz", "rb") as fi, lzma.open(tmp / f"{n}.xz", "wb", preset=9) as fo:
            shutil.copyfileobj(fi, fo, 1 << 20)
    # the ini with its three paths made placeholders tools/device/rows.py fills in
    text = (oracle / "moses.ini").read_text()
    for old, new in (("path=phrase-table.dev.gz", "path=@PT@"), ("path=reordering-table.dev.gz", "path=@RT@"),
                     ("path=lm-en5.arpa.xz", "path=@LM@")):
        if old not in text:
            print(f"device-rows --prepare: {oracle}/moses.ini: no '{old}'", file=sys.stderr)
            return 1
        text = text.replace(old, new)
    (tmp / "moses.ini").write_text(text)
    moses2 = bin_dir() / "moses2"
    kit_moses2 = None
    if not args.no_moses2:
        if not os.access(moses2, os.X_OK):
            print(f"device-rows --prepare: {moses2}: Moses2 is not built (make moses), or give --no-moses2",
                  file=sys.stderr)
            return 1
        (tmp / "bin").mkdir()
        subprocess.run(["strip", "-o", str(tmp / "bin" / "moses2"), str(moses2)], check=True)
        kit_moses2 = "bin/moses2"
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True).stdout.strip())
    ms = cfg["moses2_scaling"]
    kit = {
        "run_id": time.strftime("%Y%m%dT%H%M%S") + "-" + sha[:8],
        "git_sha": sha + ("-dirty" if dirty else ""),
        "oracle": str(oracle),
        "lm": "lm-en5.arpa.xz", "phrase_table": "phrase-table.dev.xz", "reordering_table": "reordering-table.dev.xz",
        "input": "dev.es", "glm_text": "dev.en", "moses_ini": "moses.ini", "moses2": kit_moses2,
        "sentences": args.sentences,
        "decode": {"weights": [by_kind[k].weights[i] if k in by_kind else 0.0 for k, i in INTERNAL],
                   "table_limit": tm.table_limit if tm.table_limit is not None else 20,
                   "distortion_limit": ini.distortion_limit,
                   "beam_threshold": ini.beam_threshold if ini.beam_threshold is not None else 1e-5,
                   "pop_limit": ms["pop_limit"], "stack_size": ms["stack_size"]},
        "node_size": cfg["glm_btree"]["node_size"], "min_queries": 1_000_000, "glm_repeats": 10,
    }
    (tmp / "kit.json").write_text(json.dumps(kit, indent=1) + "\n")
    if args.kit.exists():
        shutil.rmtree(args.kit)
    os.replace(tmp, args.kit)
    size = sum(p.stat().st_size for p in args.kit.rglob("*") if p.is_file())
    print(f"device-rows --prepare: {args.kit} ({size / 2**20:.1f} MiB; carry it: run(carry=['.device-kit']))",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
