#!/usr/bin/env bash
# es-train-programs.sh ES_TRAIN SOURCE_DIR OUT
#
# es-train --programs for real: register-allocation eviction trained on
# zlib's benchmark program (tiny workload) through mlgo-cc and cachegrind,
# one step of one antithetic pair, validated by run cost on the same
# program; the kept policy is written, and the flags that cannot go with
# programs are refused with messages that say why.
set -euo pipefail
es="$1" src="$2" out="$3"
rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
# Builds and runs in the test's own directory (run-cost's default place is
# $MLGO_BUILD_DIR/run-cost).
export MLGO_BUILD_DIR="$out"
common=(--task regalloc-eviction --programs zlib --program-workload tiny --steps 1
        --directions 1 --sigma 0.05)

"$es" "${common[@]}" --validation-programs zlib --validation-interval 1 \
  --initial-policy "$src/configs/policies/eviction-o2.json" -o "$out/run.h5" \
  >"$out/run.log" 2>&1 || { cat "$out/run.log"; fail "es-train --programs failed"; }
cat "$out/run.log"
grep -q "training programs zlib, validation programs zlib, rewarded by run-cost" "$out/run.log" ||
  fail "the first screen does not name the programs and the measure"
grep -q "^step 1/1 .* failed 0 .* validation" "$out/run.log" || fail "no validated step without failures"
grep -q "^policy: $out/run.json (kept: " "$out/run.log" || fail "no kept policy line"
[ -s "$out/run.json" ] || fail "no policy file"
ls "$out/run.h5.candidates"/candidate-*.json >/dev/null || fail "no candidate files"
ls -d "$out/run-cost/builds"/zlib-O2-* >/dev/null || fail "nothing built in \$MLGO_BUILD_DIR/run-cost"

expect_error() {
  local what="$1" message="$2"
  shift 2
  if "$es" "${common[@]}" -o "$out/bad.h5" --overwrite "$@" >"$out/bad.log" 2>&1; then
    fail "$what: accepted"
  fi
  grep -q -- "$message" "$out/bad.log" || { cat "$out/bad.log"; fail "$what: not '$message'"; }
}
expect_error "no initial policy" "needs an initial policy"
expect_error "a module measure" "are judged by their run cost" --measure text-size \
  --initial-policy "$src/configs/policies/eviction-o2.json"
expect_error "a corpus too" "a corpus or on programs, not both" --corpus "$out" \
  --initial-policy "$src/configs/policies/eviction-o2.json"
echo "PASS"
