#!/usr/bin/env bash
# The README's first command: set up, build what the demo runs, then one
# story in four parts, every number computed in this run:
#   1. the shipped inlining policy against -Oz on code it never trained or
#      was chosen on (C and C++), alone and behind the per-object guard;
#   2. a short training run that starts from exactly -Oz's decisions and
#      keeps the best policy on its validation code (never worse than -Oz
#      there), with its learning curve;
#   3. a real build: libpng from source through mlgo-cc with the shipped
#      policy, libpng's own test run on it, its .text against plain -Oz;
#   4. where the files are, and what to try next.
# Set-up, build and tool output go to a log file it names; each phase is one
# progress line. Idempotent: a second run reuses packages, ccache and corpora.
set -euo pipefail
cd "$(dirname "$0")/.."
MLGO_BUILD_DIR=$(realpath -m "${MLGO_BUILD_DIR:-build}")
export MLGO_BUILD_DIR
BIN="$MLGO_BUILD_DIR/apps"
CORPORA="$MLGO_BUILD_DIR/corpora"
OUT="$MLGO_BUILD_DIR/demo"
LOG="$OUT/demo.log"
mkdir -p "$OUT"
: >"$LOG"
START=$SECONDS
export MLGO_CORPUS="$BIN/mlgo-corpus"

phase() { printf '[%4s] %s\n' "$((SECONDS - START))s" "$*"; }
# quietly COMMAND…: its output to the log; on failure, the log's last lines.
quietly() {
  echo "\$ $*" >>"$LOG"
  if ! "$@" >>"$LOG" 2>&1; then
    echo "demo: failed: $*; the end of $LOG:" >&2
    tail -n 25 "$LOG" >&2
    exit 1
  fi
}
text_bytes() { # DIR: total .text of the objects below DIR
  find "$1" -name '*.o' -type f -print0 | sort -z |
    xargs -0 "$(llvm-config-22 --bindir)/llvm-size" -A 2>/dev/null |
    awk '$1 == ".text" || $1 ~ /^\.text\./ {s += $2} END {print s + 0}'
}

echo "mlgo-es demo: details of every step go to $LOG"
phase "set-up: Debian packages (scripts/setup.sh)"
quietly bash scripts/setup.sh
phase "build: the tools the demo runs (scripts/build.sh; scripts/test.sh builds the rest)"
quietly bash scripts/build.sh mlgo-corpus mlgo-eval es-train mlgo-results mlgo-cc \
  mlgo-inprocess-worker mlgo-inliner
phase "corpora: zlib, bzip2, libpng, ninja and Lua from their Debian sources (cached)"
for recipe in zlib bzip2 libpng ninja lua; do
  quietly bash "corpus/recipes/$recipe.sh"
done

echo
echo "== 1. The shipped policy (inlining-oz) against -Oz, on code it never trained or was chosen on"
phase "compiling each module with the policy and with -Oz (mlgo-eval report)"
quietly "$BIN/mlgo-eval" report inlining-oz bzip2 libpng zlib ninja --best-of --regressions 0 \
  --markdown "$OUT/report.md"
sed -n '3,$p' "$OUT/report.md"
echo "'vs -Oz': each object the smaller of the policy's and -Oz's (mlgo-cc --mlgo-best-of),"
echo "never larger; 'policy alone': every object with the policy. ninja is C++, the rest C."
echo "Sizes are each object's .text. A linker keeps one copy of a C++ inline function, so the"
echo "linked ninja gains less than its objects; counted as the linker keeps them (--linked):"
phase "ninja again, each COMDAT group counted once (mlgo-eval report --linked)"
quietly "$BIN/mlgo-eval" report inlining-oz ninja --best-of --linked --regressions 0 \
  --markdown "$OUT/linked.md"
sed -n '3,4p' "$OUT/linked.md"
grep '^| ninja |' "$OUT/linked.md"

echo
echo "== 2. Training: es-train on Lua from exactly -Oz's decisions, validated on zlib"
phase "8 evolution-strategies steps (output in the log)"
quietly "$BIN/es-train" --corpus "$CORPORA/lua/corpus" --validation-corpus "$CORPORA/zlib/corpus" \
  --validation-interval 2 --steps 8 --directions 4 --modules-per-step 4 \
  -o "$OUT/es.h5" --overwrite
grep -E '^(done|policy):' "$LOG" | tail -n 2
# Debian's python3 has h5py and matplotlib (a pyenv python3 on PATH may not).
if /usr/bin/python3 scripts/plot_runs.py "$OUT/es.h5" -o "$OUT/plots" >>"$LOG" 2>&1; then
  echo "learning curve: $OUT/plots/learning-curves.png"
else
  echo "(no plot: see the end of $LOG)"
fi

echo
echo "== 3. A real build: libpng from source through mlgo-cc --mlgo-policy=inlining-oz --mlgo-best-of"
phase "configure and make libpng with the launcher as CC, then its own test (pngtest)"
rm -rf "$OUT/libpng"
export MLGO_POLICY="$PWD/configs/policies/inlining-oz.policy" MLGO_BEST_OF=1
quietly bash corpus/recipes/libpng.sh --work-dir "$OUT/libpng" --launcher "$BIN/mlgo-cc"
policy=$(text_bytes "$OUT/libpng/build") # the library's objects, as the corpus build's
plain=$(text_bytes "$CORPORA/libpng/build")
(cd "$OUT/libpng/build" && quietly make pngtest && quietly ./pngtest pngtest.png)
unset MLGO_POLICY MLGO_BEST_OF
echo "libpng's own test on the policy-built library: $(grep -E '^ *libpng (passes|FAILS) test' "$LOG" | tail -n 1 | sed 's/^ *//')"
awk -v a="$policy" -v b="$plain" 'BEGIN {
  printf "libpng .text: %d bytes with the policy, %d with plain -Oz (%+.3f %%)\n", a, b, 100 * (a - b) / b }'

echo
echo "== 4. Where things are, and what to try next"
echo "run file      $OUT/es.h5          ($BIN/mlgo-results summary $OUT/es.h5)"
echo "its policy    $OUT/es.json"
echo "plots         $OUT/plots/"
echo "report        $OUT/report.md"
echo "log           $LOG"
echo "next: scripts/test.sh (the test suite); docs/training.md (longer runs, the split);"
echo "      docs/deployment.md (mlgo-cc as CC or CMake's compiler launcher in your own build)"
phase "done"
