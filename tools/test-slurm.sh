#!/usr/bin/env bash
# make test-slurm: the cluster path against a real SLURM (issue 29).
#   1. tools/slurm-local.sh start: a one-node SLURM from Debian's packages (stopped and removed on exit, always)
#   2. tests/test_slurm.py: sharded decoding as SLURM jobs equals one unsharded run; a job cancelled by scancel,
#      and one killed by SLURM at its time limit, leave no partial output under a final name and the next run
#      completes them with identical output
#   3. the smoke grid through the SLURM executor (workflow/profiles/slurm-smoke) into build/slurm-smoke; its
#      regression rule compares the exact metrics with workflow/baselines/smoke.csv (what a local smoke run is
#      checked against), and where a local smoke run exists (build/smoke/metrics) its exact metrics are compared too
# Env: SLURM_SMOKE_TARGETS (default: the whole grid) restricts step 3 to some targets; SLURM_SKIP_GRID=1 skips it,
# SLURM_SKIP_TESTS=1 skips step 2.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN=${BIN:-.venv/bin}
case $BIN in /*) ;; *) BIN="$ROOT/$BIN" ;; esac
export PATH="$BIN:$PATH"   # smtbench in the jobs (make exports it too; this script also runs alone)
SLURM_OUT=build/slurm-smoke

"$BIN/python" -c "import snakemake_executor_plugin_slurm" 2> /dev/null ||
    { echo "test-slurm: the executor plugin is missing: pip install -e '.[slurm]'" >&2; exit 1; }
trap 'bash tools/slurm-local.sh stop' EXIT
bash tools/slurm-local.sh start
eval "$(bash tools/slurm-local.sh env)"
export SMTBENCH_REQUIRE_SLURM=1   # tests/test_slurm.py fails instead of skipping when SLURM is not reachable

if [ "${SLURM_SKIP_TESTS:-0}" != 1 ]; then
    start=$(date +%s)
    "$BIN/python" -m pytest -q -p no:cacheprovider tests/test_slurm.py
    echo "test-slurm: SLURM tests $(( $(date +%s) - start )) s"
fi

if [ "${SLURM_SKIP_GRID:-0}" != 1 ]; then
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$BIN/snakemake" --profile workflow/profiles/slurm-smoke ${SLURM_SMOKE_TARGETS:-}
    echo "test-slurm: smoke grid through SLURM $(( $(date +%s) - start )) s"
    if [ -z "${SLURM_SMOKE_TARGETS:-}" ] && [ -d build/smoke/metrics ]; then
        "$BIN/python" - "$SLURM_OUT/metrics" build/smoke/metrics <<'EOF'
import sys
from pathlib import Path

import pandas as pd

def exact(d):
    frames = [pd.read_csv(p, dtype={"value": str}) for p in sorted(Path(d).glob("*.csv"))]
    df = pd.concat(frames, ignore_index=True)
    df = df[df.kind == "exact"]
    return {(r.experiment, r.key, r.metric): r.value for r in df.itertuples()}

slurm, local = exact(sys.argv[1]), exact(sys.argv[2])
common = slurm.keys() & local.keys()
bad = sorted(k for k in common if slurm[k] != local[k])
for k in bad:
    print(f"test-slurm: {'/'.join(k)}: SLURM {slurm[k]} != local {local[k]}", file=sys.stderr)
print(f"test-slurm: {len(common) - len(bad)} of {len(common)} exact metrics equal the local smoke run's "
      f"(only SLURM: {len(slurm.keys() - local.keys())}, only local: {len(local.keys() - slurm.keys())})")
sys.exit(1 if bad else 0)
EOF
    fi
fi
