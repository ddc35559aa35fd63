#!/usr/bin/env bash
# es-train-programs.sh ES_TRAIN SOURCE_DIR CORPORA OUT
#
# es-train --programs for real: register-allocation eviction trained on
# zlib's benchmark program (tiny workload) through mlgo-cc and cachegrind,
# one step of one antithetic pair, validated by run cost on the same
# program; the kept policy is written, and the flags that cannot go with
# programs are refused with messages that say why. Then a live-range
# priority policy trained the same way.
set -euo pipefail
es="$1" src="$2" corpora="$3" out="$4"
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
"$es" --corpus "$corpora/zlib-O2/corpus" --task regalloc-eviction --verify-program-builds \
  -o "$out/bad.h5" --overwrite >"$out/bad.log" 2>&1 && fail "--verify-program-builds without programs: accepted"
grep -q "verifyProgramBuilds: only with programs" "$out/bad.log" ||
  { cat "$out/bad.log"; fail "--verify-program-builds without programs: not named"; }

# The priority task trains on run cost the same way (its policies deployed
# through mlgo-cc --mlgo-priority-policy): a random 8-unit start from one
# step on zlib's -O2 corpus (no default to clone on its channel), then a
# step on zlib's program.
"$es" --corpus "$corpora/zlib-O2/corpus" --task regalloc-priority --backend clang \
  --steps 1 --directions 1 --modules-per-step 2 --hidden 8 --vocabulary-quantiles 20 \
  --residual-margin 0 --seed 3 -j 1 -o "$out/priority-start.h5" >"$out/priority-start.log" 2>&1 ||
  { cat "$out/priority-start.log"; fail "es-train --task regalloc-priority on the corpus failed"; }
# --verify-program-builds checks the run-cost build cache: a cached plain
# build whose program no longer matches its sources is found (here one the
# test alters), and the build made again replaces it.
plain_program=$(ls "$out/run-cost/builds"/zlib-O2-plain-*/build/bench-* | head -n 1)
printf 'stale' >>"$plain_program"
if "$es" --task regalloc-priority --programs zlib --program-workload tiny --steps 1 --directions 1 \
  --sigma 0.5 --initial-policy "$out/priority-start.json" -o "$out/stale.h5" --verify-program-builds \
  >"$out/stale.log" 2>&1; then
  fail "--verify-program-builds accepted a stale cached build"
fi
grep -q "differs from the same build made again" "$out/stale.log" ||
  { cat "$out/stale.log"; fail "--verify-program-builds: not the stale-build message"; }
"$es" --task regalloc-priority --programs zlib --program-workload tiny --steps 1 --directions 1 \
  --sigma 0.5 --initial-policy "$out/priority-start.json" -o "$out/priority.h5" --verify-program-builds \
  >"$out/priority.log" 2>&1 || { cat "$out/priority.log"; fail "es-train --programs for priorities failed"; }
grep -q "^step 1/1 .* failed 0" "$out/priority.log" || fail "the priority step failed jobs"
echo "PASS"
