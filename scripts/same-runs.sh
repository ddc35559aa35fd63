#!/usr/bin/env bash
# Do two builds train the same? Runs short es-train (three optimisers, with
# and without validation), ppo-train (warm and random start) and bc-train
# runs on zlib (validation on Lua), and es-train, bc-train and ppo-train on
# the register-allocation eviction task (zlib's -O2 corpus), with the tools
# of both builds, then
# `mlgo-results diff` on each pair: every dataset must agree, timings aside.
# For refactors that must not change results.
#
#   scripts/same-runs.sh OTHER_BUILD_DIR [THIS_BUILD_DIR]
#
# SAME_RUNS_IGNORE="KEY…": config keys and datasets a change is meant to
# alter (passed to mlgo-results diff --ignore), e.g. "overwrite" once the
# stored config no longer holds that launcher-only flag.
#
# Build the other revision first, e.g.
#   git worktree add /tmp/old REV && MLGO_BUILD_DIR=/tmp/old/build bash /tmp/old/scripts/build.sh
# Both builds use the corpora of this build (build/corpora: zlib, lua).
set -euo pipefail
cd "$(dirname "$0")/.."
other=$(realpath "$1")
this=$(realpath "${2:-${MLGO_BUILD_DIR:-build}}")
corpora=$this/corpora
[ -d "$corpora/zlib/corpus" ] && [ -d "$corpora/lua/corpus" ] && [ -d "$corpora/zlib-O2/corpus" ] ||
  { echo "same-runs: build the zlib, lua and zlib-O2 corpora first (ctest -R '^recipe\.')" >&2; exit 2; }
work=$(mktemp -d /tmp/mlgo-same-runs.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Paths end up in the stored config and attributes: both builds run the same
# command lines, writing to the same place, with the worker behind one link.
runs() { # BUILD_DIR OUT_DIR
  local bin=$1/apps out=$work/run zlib=$corpora/zlib/corpus lua=$corpora/lua/corpus
  ln -sfn "$bin/mlgo-inprocess-worker" "$work/worker"
  export MLGO_INPROCESS_WORKER=$work/worker
  rm -rf "$out" && mkdir -p "$out"
  local common=(--workers 1 --hidden 8 --vocabulary-quantiles 50)
  "$bin/bc-train" --corpus "$zlib" --epochs 4 "${common[@]}" -o "$out/bc.h5" \
    --policy-output "$out/bc.json"
  "$bin/es-train" --corpus "$zlib" --steps 4 --directions 3 --modules-per-step 3 --sigma 0.5 \
    --learning-rate 0.05 --seed 3 --validation-corpus "$zlib" --validation-interval 2 \
    --snapshot-interval 2 "${common[@]}" -o "$out/es-val.h5"
  "$bin/es-train" --corpus "$zlib" --steps 3 --directions 2 --modules-per-step 2 \
    --initial-policy "$out/bc.json" --scale-by-weights --optimizer trust-region-es \
    --evaluate-center --seed 5 "${common[@]}" -o "$out/es-tr.h5"
  "$bin/es-train" --corpus "$zlib" --steps 3 --optimizer sep-cma-es --cma-population 4 \
    --modules-per-step 2 --seed 9 "${common[@]}" -o "$out/es-cma.h5"
  "$bin/ppo-train" --corpus "$zlib" --iterations 3 --modules-per-iteration 5 \
    --updates-per-iteration 10 --minibatch-size 128 --initial-policy "$out/bc.json" \
    --validation-corpus "$lua" --validation-interval 2 "${common[@]}" -o "$out/ppo.h5" \
    --policy-output "$out/ppo.json"
  "$bin/ppo-train" --corpus "$zlib" --iterations 2 --modules-per-iteration 4 \
    --updates-per-iteration 5 --seed 2 "${common[@]}" -o "$out/ppo-rand.h5" \
    --policy-output "$out/ppo-rand.json"
  local eviction=(--corpus "$corpora/zlib-O2/corpus" --task regalloc-eviction "${common[@]}")
  "$bin/es-train" "${eviction[@]}" --steps 2 --directions 2 --modules-per-step 3 --sigma 0.5 \
    --seed 4 -o "$out/evict-es.h5"
  "$bin/bc-train" "${eviction[@]}" --epochs 3 --seed 1 -o "$out/evict-bc.h5" \
    --policy-output "$out/evict-bc.json"
  "$bin/ppo-train" "${eviction[@]}" --iterations 2 --modules-per-iteration 3 \
    --updates-per-iteration 3 --minibatch-size 256 --initial-policy "$out/evict-bc.json" \
    -o "$out/evict-ppo.h5"
  mv "$out" "$2"
}

echo "same-runs: runs with $other" >&2
runs "$other" "$work/other" > "$work/other.log" 2>&1 || { cat "$work/other.log"; exit 2; }
echo "same-runs: runs with $this" >&2
runs "$this" "$work/this" > "$work/this.log" 2>&1 || { cat "$work/this.log"; exit 2; }
status=0
for run in bc es-val es-tr es-cma ppo ppo-rand evict-es evict-bc evict-ppo; do
  printf '%-9s ' "$run"
  # shellcheck disable=SC2086 # a list of keys
  "$this/apps/mlgo-results" diff "$work/other/$run.h5" "$work/this/$run.h5" \
    ${SAME_RUNS_IGNORE:+--ignore $SAME_RUNS_IGNORE} || status=1
done
exit $status
