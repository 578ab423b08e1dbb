#!/usr/bin/env bash
# tools/device-rows.sh - the rows only a big machine gives (issue 43): gLM's GPU rows (Table 3's kernel and
# with-copies rows) and a 1-16-thread sweep of our cube pruning beside Moses2 on the same model, run on a lent device
# machine (one H100/H200, 16 cores; Python 3.12 without cffi, no package index, 64 MiB of working tree).
#
#   bash tools/device-rows.sh --prepare [--sentences N]   here: the kit (.device-kit/, ignored; tools/device/prepare.py)
#   bash tools/device-rows.sh                              there, from the carried tree: rows into $OUT
#   bash tools/device-rows.sh --dry [OUTDIR]               here: the same with the CPU part only, small (the test)
#   bash tools/device-rows.sh --import DIR                 here: the returned files into results/raw (import_rows.py)
#
# On the device, through the device tool (one call, about 4 minutes; $OUT comes back):
#   run(command="bash tools/device-rows.sh", carry=[".device-kit"], timeout_s=420)
# then here: bash tools/device-rows.sh --import <files_at>, and the report rules render glm_device and
# moses2_device_threads from the imported rows (CONTRIBUTING.md, "Device rows").
#
# It builds device_rows (tools/device/device_rows.c over csrc/; -march=native unless SMTBENCH_NATIVE=0, as the
# benchmarks' builds) and, where nvcc is, the same with csrc/cuda/btree.cu linked in; then tools/device/rows.py times
# the points (its docstring says how) within a budget, so that a rerun fits the session's 15 device minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=run
case "${1:-}" in
  --prepare) shift; exec "${PYTHON:-.venv/bin/python}" tools/device/prepare.py "$@" ;;
  --import) shift; exec "${PYTHON:-.venv/bin/python}" tools/device/import_rows.py "$@" ;;
  --dry) mode=dry; shift; OUT="${1:-build/device-dry}"; shift || true ;;
  "") ;;
  -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
  *) echo "tools/device-rows.sh: unknown option $1 (--prepare, --dry [OUTDIR], --import DIR, or none on the device)" >&2
     exit 2 ;;
esac
KIT="${DEVICE_KIT:-.device-kit}"
if [ ! -f "$KIT/kit.json" ]; then
  echo "tools/device-rows.sh: $KIT/kit.json missing: run 'bash tools/device-rows.sh --prepare' here first" >&2
  exit 1
fi
: "${OUT:?tools/device-rows.sh: OUT (the output folder) is not set}"
PY="$(command -v python3 || true)"
[ -n "$PY" ] || { echo "tools/device-rows.sh: python3 not found" >&2; exit 1; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/device-rows.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT" "$WORK/obj"

CC="${CC:-cc}"
FLAGS=(-std=c11 -O3 -fno-strict-aliasing -pthread -Icsrc)
[ "${SMTBENCH_NATIVE:-1}" = 0 ] || FLAGS+=(-march=native)
SOURCES=(csrc/*/*.c)
# csrc/ in parallel, one object each (csrc/cuda is nvcc's)
printf '%s\n' "${SOURCES[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'o="$1/obj/$(echo "$2" | tr / _).o"; shift 2; exec "$@" -c "$0" -o "$o"' {} "$WORK" {} "$CC" "${FLAGS[@]}"
"$CC" "${FLAGS[@]}" -c tools/device/device_rows.c -o "$WORK/main.o"
"$CC" "${FLAGS[@]}" -o "$WORK/device_rows" "$WORK/main.o" "$WORK"/obj/*.o -lm
BIN="$WORK/device_rows"
BUILD="$CC ${FLAGS[*]}"
GPU=()
if command -v nvcc >/dev/null 2>&1; then
  # the GPU rows: the same program with the CUDA B-tree (sm_90: the H100 and H200; compute_90 PTX besides); a failed
  # CUDA build leaves the CPU rows to run, its reason in the log and in the gLM GPU row
  if nvcc -O3 -std=c++17 -Icsrc -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
       -c csrc/cuda/btree.cu -o "$WORK/btree_cu.o" \
     && "$CC" "${FLAGS[@]}" -DSB_WITH_CUDA -c tools/device/device_rows.c -o "$WORK/main_cuda.o" \
     && nvcc -o "$WORK/device_rows_cuda" "$WORK/main_cuda.o" "$WORK"/obj/*.o "$WORK/btree_cu.o" -lpthread -lm; then
    BIN="$WORK/device_rows_cuda"
    BUILD="$BUILD; nvcc $(nvcc --version | tail -1) sm_90"
    GPU=(--gpu)
  else
    echo "tools/device-rows.sh: the CUDA build failed (above): CPU rows only" >&2
    BUILD="$BUILD; the CUDA build failed"
  fi
fi
echo "tools/device-rows.sh: built ($BUILD)" >&2

if [ "$mode" = dry ]; then
  # the CPU part here, small: 2 thread counts, 20 verses, one repeat (tests/test_device_rows.py)
  exec "$PY" tools/device/rows.py --kit "$KIT" --work "$WORK/run" --out "$OUT" --bin "$BIN" --build "$BUILD" \
    "${GPU[@]}" --dry --threads 1,2 --sentences 20 --repeats 1 --min-queries 20000 --budget 60
fi
"$PY" tools/device/rows.py --kit "$KIT" --work "$WORK/run" --out "$OUT" --bin "$BIN" --build "$BUILD" "${GPU[@]}" \
  --threads 1,2,4,8,16 --repeats "${DEVICE_REPEATS:-5}" --budget "${DEVICE_BUDGET:-230}"
