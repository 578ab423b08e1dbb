#!/usr/bin/env bash
# Valgrind (callgrind, callgrind_annotate, valgrind/callgrind.h) for `smtbench count` (issue 42), installed with
# apt-get where missing, the way tools/build_lmplz.sh installs its packages. VALGRIND_NO_APT=1 skips apt-get.
# The C extension must be (re)built after this so that csrc/util/cgregion.c sees valgrind/callgrind.h.
set -euo pipefail
log() { echo "install_valgrind: $*" >&2; }
if command -v valgrind >/dev/null && [ -f /usr/include/valgrind/callgrind.h ]; then exit 0; fi
if [ "${VALGRIND_NO_APT:-0}" = 1 ] || ! command -v apt-get >/dev/null; then
    log "valgrind (with its headers) is missing: install it (Debian: apt-get install valgrind), or unset VALGRIND_NO_APT"
    exit 1
fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
log "installing valgrind"
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
    valgrind >&2 || { log "could not install valgrind (see above)"; exit 1; }
