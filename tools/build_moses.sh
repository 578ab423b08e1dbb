#!/usr/bin/env bash
# Build the live Moses peers into build/moses/bin (gitignored): Moses2 and Moses v1, the training programs of the
# Mediani baseline and the Moses2 paper's Figs 1-2, the binarizers, and mert/kbmira (tuning peers).
#
#   bash tools/build_moses.sh            # the set `make test` needs: moses2 mert kbmira extractor
#   bash tools/build_moses.sh all        # everything a reproduction needs (`make moses`, `make reproduce`)
#   MOSES_SRC=~/mosesdecoder bash tools/build_moses.sh all   # from your own checkout instead of the tarball
#
# The source is COPIED to build/moses/src and the copy is patched (Moses' Jamroot lists every program and
# sub-project, and the docs/tests the tarball omits break a build of everything, so the copy's `alias programs` is
# trimmed to the targets asked for and its `build-projects` line commented out); bjam writes bin/ into that copy.
# A user's checkout is never written. Default source: ../shared/peers/mosesdecoder-34452895.tar.xz (the commit
# that built the oracle). Idempotent: when every program of the set exists and was built from the same source,
# it only prints build/moses/bin. The Debian packages are installed when missing (as root, or with sudo), tcmalloc
# (libgoogle-perftools-dev) among them: Moses' BUILD-INSTRUCTIONS and its Jamroot link tcmalloc_minimal wherever it
# is installed ("install tcmalloc for faster threading"), so the peer is built as its users build it; the allocator
# each binary ended up with is read from the file and recorded in every Moses row (smtbench.moses_peer.allocator_of).
# Env: MOSES_SRC (a checkout or a .tar.xz/.tar.gz), MOSES_CACHE (default build/moses), MOSES_JOBS (default 2),
#      MOSES_NO_APT=1 to skip apt-get, MOSES_CMPH=1 to add the compact binarizers (needs libcmph-dev),
#      MOSES_DRY_RUN=1 to copy and patch the source and print the bjam command without building.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MOSES_CACHE:-$ROOT/build/moses}"
JOBS="${MOSES_JOBS:-2}"
SET="${1:-test}"
DEFAULT_SRC="$ROOT/../shared/peers/mosesdecoder-34452895.tar.xz"
SRC_IN="${MOSES_SRC:-$DEFAULT_SRC}"
log() { echo "build_moses: $*" >&2; }
die() { log "$*"; exit 1; }

case "$SET" in
  test)
    TARGETS="moses2//moses2 mert//mert mert//kbmira mert//extractor"
    PROGRAMS="moses2 mert kbmira extractor" ;;
  all)
    TARGETS="moses2//moses2 moses-cmd//moses mert//programs phrase-extract phrase-extract//lexical-reordering symal probingpt//programs misc//processLexicalTable"
    PROGRAMS="moses2 moses mert kbmira extractor evaluator extract score consolidate lexical-reordering-score symal CreateProbingPT processLexicalTable"
    if [ "${MOSES_CMPH:-0}" = 1 ]; then
      TARGETS="$TARGETS misc//programsMin"; PROGRAMS="$PROGRAMS processPhraseTableMin processLexicalTableMin"
    fi ;;
  *) die "unknown set '$SET' (test or all)" ;;
esac

# The source's identity: a tarball's sha256, or a checkout's git revision (+ 'dirty' when it has changes).
if [ -f "$SRC_IN" ]; then
  SRC_ID="tar:$(sha256sum "$SRC_IN" | cut -c1-16)"
elif [ -d "$SRC_IN" ]; then
  [ -f "$SRC_IN/Jamroot" ] || die "MOSES_SRC=$SRC_IN: not a mosesdecoder checkout (no Jamroot)"
  if git -C "$SRC_IN" rev-parse HEAD >/dev/null 2>&1; then
    SRC_ID="git:$(git -C "$SRC_IN" rev-parse HEAD)$(git -C "$SRC_IN" status --porcelain -uno | grep -q . && echo +dirty || true)"
  else
    SRC_ID="dir:$(cd "$SRC_IN" && find . -path ./bin -prune -o -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.hh' -o -name 'Jam*' \) -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16)"
  fi
elif [ -z "${MOSES_SRC:-}" ]; then
  # no source given and no peers tarball beside the checkout: nothing to build, and not an error (the tests that
  # compare with Moses skip saying so, the tables' Moses rows read "not built (make moses)")
  log "no Moses source: $DEFAULT_SRC is absent and MOSES_SRC is not set; Moses is not built (set MOSES_SRC to your mosesdecoder checkout)"
  exit 0
else
  die "MOSES_SRC=$SRC_IN: no such file or directory (a mosesdecoder checkout or its .tar.xz)"
fi
STAMP="$CACHE/bin/.source"
BUILD_ID="$SRC_ID tcmalloc"  # the bin stamp: the source and how it was built (older builds: --without-tcmalloc)
have_all() { for p in $PROGRAMS $([[ " $PROGRAMS " == *" kbmira "* ]] && echo kbmira-dedupfix); do [ -x "$CACHE/bin/$p" ] || return 1; done; }
if have_all && [ "$(cat "$STAMP" 2>/dev/null)" = "$BUILD_ID" ]; then echo "$CACHE/bin"; exit 0; fi

# Debian build dependencies (as ../shared/peers/README.md lists them).
PKGS="libboost-all-dev zlib1g-dev libbz2-dev liblzma-dev libgoogle-perftools-dev g++ make"
[ "${MOSES_CMPH:-0}" = 1 ] && PKGS="$PKGS libcmph-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ] && [ "${MOSES_DRY_RUN:-0}" != 1 ]; then
  if [ "${MOSES_NO_APT:-0}" = 1 ] || ! command -v apt-get >/dev/null; then
    die "missing Debian packages:$missing (install them, or unset MOSES_NO_APT)"
  fi
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  log "installing$missing"
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
      $missing >&2 || die "could not install:$missing (see above)"
fi

# A private copy of the source (re-made when the source changed; kept otherwise so bjam builds incrementally).
SRC="$CACHE/src"
if [ "$(cat "$CACHE/src.id" 2>/dev/null)" != "$SRC_ID" ] || [ ! -f "$SRC/Jamroot.orig" ]; then
  rm -rf "$SRC" "$CACHE/src.id" "$CACHE/bin"; mkdir -p "$SRC"
  if [ -f "$SRC_IN" ]; then
    log "unpacking $SRC_IN"
    tar -xf "$SRC_IN" -C "$SRC" --strip-components=1
  else
    log "copying $SRC_IN"
    (cd "$SRC_IN" && tar --exclude=./bin --exclude=./.git -cf - .) | tar -xf - -C "$SRC"
  fi
  cp "$SRC/Jamroot" "$SRC/Jamroot.orig"
  echo "$SRC_ID" > "$CACHE/src.id"
fi

# Patch the copy: trim `alias programs` to the targets asked for; no incidental targets of build-projects.
python3 - "$SRC/Jamroot.orig" "$SRC/Jamroot" "$TARGETS" <<'EOF'
import re, sys
src, dst, targets = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src).read()
new, n = re.subn(r"(?ms)^alias programs\s*:.*?^;\s*$", "alias programs : " + targets + " ;", text, count=1)
if n != 1:
    sys.exit("build_moses: Jamroot has no `alias programs : ... ;` block to trim")
new = re.sub(r"(?m)^build-projects ", "# build-projects ", new)
open(dst, "w").write(new)
EOF

OPTS="--with-boost=/usr --no-xmlrpc-c toolset=gcc link=static -q"  # tcmalloc: linked as Moses does, when installed
[ "${MOSES_CMPH:-0}" = 1 ] && OPTS="$OPTS --with-cmph=/usr"
if [ "${MOSES_DRY_RUN:-0}" = 1 ]; then  # tests: source copied and patched, nothing built
  echo "cd $SRC && ./bjam -j$JOBS $OPTS"; exit 0
fi
# a kbmira-dedupfix step cut off after patching the copy (below) left the original aside: put it back first
if [ -f "$SRC/mert/FeatureDataIterator.cpp.orig" ]; then
  mv "$SRC/mert/FeatureDataIterator.cpp.orig" "$SRC/mert/FeatureDataIterator.cpp"; touch "$SRC/mert/FeatureDataIterator.cpp"
fi
log "building $PROGRAMS (bjam -j$JOBS; the first build takes 15-30 minutes on 2 cores)"
start=$(date +%s)
(cd "$SRC" && ./bjam -j"$JOBS" $OPTS) > "$CACHE/build.log" 2>&1 || {
  tail -n 30 "$CACHE/build.log" >&2; die "bjam failed (full log: $CACHE/build.log)"; }
mkdir -p "$CACHE/bin"
for p in $PROGRAMS; do
  [ -x "$SRC/bin/$p" ] || die "bjam finished but $SRC/bin/$p is missing (log: $CACHE/build.log)"
  cp "$SRC/bin/$p" "$CACHE/bin/$p.tmp" && mv "$CACHE/bin/$p.tmp" "$CACHE/bin/$p"
done
# kbmira-dedupfix: kbmira with its one-line dedup bug fixed, beside the shipped kbmira (which stays the peer of
# record). The bug (mert/FeatureDataIterator.cpp, operator== compares item1 with itself) makes kbmira's dedup set
# drop every hypothesis hashed into an occupied bucket; the tuning table shows both programs on the same lists.
# The copy is patched, kbmira relinked, the file restored and the tree rebuilt (so the other mert programs never
# link the patched object). A source without the bug: the fixed program is kbmira itself.
if [[ " $PROGRAMS " == *" kbmira "* ]]; then
  F="$SRC/mert/FeatureDataIterator.cpp"
  if grep -qF 'return item1.dense==item1.dense && item1.sparse==item1.sparse;' "$F"; then
    cp -p "$F" "$F.orig"
    sed 's/item1\.dense==item1\.dense/item1.dense==item2.dense/; s/item1\.sparse==item1\.sparse/item1.sparse==item2.sparse/' \
      "$F.orig" > "$F"
    (cd "$SRC" && ./bjam -j"$JOBS" $OPTS mert//kbmira) >> "$CACHE/build.log" 2>&1 || {
      mv "$F.orig" "$F"; touch "$F"; die "bjam failed on kbmira-dedupfix (log: $CACHE/build.log)"; }
    fixed=$(find "$SRC/mert/bin" -name kbmira -type f -newer "$F.orig" | head -n 1)
    [ -n "$fixed" ] || { mv "$F.orig" "$F"; touch "$F"; die "kbmira-dedupfix: bjam built no kbmira"; }
    cp "$fixed" "$CACHE/bin/kbmira-dedupfix.tmp"
    mv "$F.orig" "$F"; touch "$F"
    (cd "$SRC" && ./bjam -j"$JOBS" $OPTS mert//kbmira) >> "$CACHE/build.log" 2>&1 || die "bjam failed rebuilding kbmira"
  else
    cp "$CACHE/bin/kbmira" "$CACHE/bin/kbmira-dedupfix.tmp"
  fi
  mv "$CACHE/bin/kbmira-dedupfix.tmp" "$CACHE/bin/kbmira-dedupfix"
fi
help="$("$CACHE/bin/moses2" --help 2>&1 || true)"
case "$help" in *"beam search decoder"*) ;; *) die "built moses2 but it does not run: ${help:0:300}" ;; esac
echo "$BUILD_ID" > "$STAMP"
log "built in $(( $(date +%s) - start )) s: $PROGRAMS"
echo "$CACHE/bin"
