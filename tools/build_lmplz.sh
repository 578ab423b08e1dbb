#!/usr/bin/env bash
# Build KenLM's programs from the PyPI sdist of `kenlm` 0.3.0 into build/lmplz/bin (gitignored): lmplz (the
# reference estimator for tests/test_lm_estimate.py) and the live peers build_binary, query and kenlm_benchmark, and
# probing_hash_table_benchmark (KenLM's hash-table benchmark, patched by tools/kenlm-probing-benchmark.patch to time
# one table size on one thread when given ENTRIES LOOKUPS: the peer of bench mokry_hash --kenlm-peer; with a third
# argument SEED its keys come from a seeded generator: the deterministic peer of `smtbench count`).
# Nothing of KenLM is committed to this repository. Idempotent: a second run only prints the lmplz path (a changed
# patch rebuilds the hash benchmark).
#   bash tools/build_lmplz.sh            # -> build/lmplz/bin/{lmplz,build_binary,query,kenlm_benchmark,...}
# Env: LMPLZ_CACHE (default build/lmplz), LMPLZ_JOBS (default 2), LMPLZ_NO_APT=1 to skip apt-get.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${LMPLZ_CACHE:-$ROOT/build/lmplz}"
JOBS="${LMPLZ_JOBS:-2}"
VERSION=0.3.0
BIN="$CACHE/bin/lmplz"
PROGRAMS="lmplz build_binary query kenlm_benchmark probing_hash_table_benchmark"
log() { echo "build_lmplz: $*" >&2; }

have_all() { for p in $PROGRAMS; do [ -x "$CACHE/bin/$p" ] || return 1; done; }
# the hash benchmark is rebuilt whenever the patch changes: its sha256 is stamped beside the built programs
PATCH="$ROOT/tools/kenlm-probing-benchmark.patch"
PATCH_SUM="$(sha256sum "$PATCH" | cut -d' ' -f1)"
STAMP="$CACHE/bin/.kenlm-probing-benchmark.patch.sha256"
patched() { [ "$(cat "$1" 2>/dev/null)" = "$PATCH_SUM" ]; }
if have_all && patched "$STAMP" && { "$BIN" --help 2>&1 || true; } | grep -q Kneser; then
    echo "$BIN"; exit 0
fi
mkdir -p "$CACHE"

# Debian build dependencies (boost program_options/system/thread/test, zlib, bz2, lzma).
PKGS="libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev cmake g++ make patch"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    if [ "${LMPLZ_NO_APT:-0}" = 1 ] || ! command -v apt-get >/dev/null; then
        log "missing Debian packages:$missing (install them, or unset LMPLZ_NO_APT)"; exit 1
    fi
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    log "installing$missing"
    # wait for a busy package manager (another apt/dpkg run) instead of failing
    $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
        $missing >&2 || { log "could not install:$missing (see above)"; exit 1; }
fi

# The sdist (downloaded once).
SDIST="$(ls "$CACHE"/kenlm-$VERSION.tar.gz 2>/dev/null || true)"
if [ -z "$SDIST" ]; then
    log "downloading the kenlm==$VERSION sdist from PyPI"
    python -m pip download --no-deps --no-binary :all: --no-build-isolation -d "$CACHE" "kenlm==$VERSION" >&2
    SDIST="$CACHE/kenlm-$VERSION.tar.gz"
fi
SRC="$CACHE/kenlm-$VERSION"
if [ ! -f "$SRC/CMakeLists.txt" ]; then
    rm -rf "$SRC"; tar -xzf "$SDIST" -C "$CACHE"
fi
# KenLM's hash benchmark with a one-size mode (its own code otherwise unchanged); applied once per revision of the
# patch, to the sdist's own file
PHT="util/probing_hash_table_benchmark_main.cc"
if ! patched "$SRC/.kenlm-probing-benchmark.patch.sha256"; then
    tar -xzf "$SDIST" -C "$CACHE" "kenlm-$VERSION/$PHT"
    patch -s -p0 -d "$CACHE" < "$PATCH" >&2
    echo "$PATCH_SUM" > "$SRC/.kenlm-probing-benchmark.patch.sha256"
fi

# Configure and build only KenLM's programs.
BLD="$CACHE/cmake-build"
mkdir -p "$BLD"
log "building $PROGRAMS (cmake, -j$JOBS)"
cmake -S "$SRC" -B "$BLD" -DCMAKE_BUILD_TYPE=Release -DKENLM_MAX_ORDER=6 -DCOMPILE_TESTS=OFF >&2
cmake --build "$BLD" --target $PROGRAMS -j "$JOBS" >&2
mkdir -p "$CACHE/bin"
for p in $PROGRAMS; do
    cp "$(find "$BLD" -type f -name "$p" -perm -u+x | head -n1)" "$CACHE/bin/$p.tmp"
    mv "$CACHE/bin/$p.tmp" "$CACHE/bin/$p"
done
{ "$BIN" --help 2>&1 || true; } | grep -q Kneser || { log "built $BIN but it does not run"; exit 1; }
echo "$PATCH_SUM" > "$STAMP"
echo "$BIN"
