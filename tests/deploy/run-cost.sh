#!/usr/bin/env bash
# run-cost.sh BUILD_DIR RECIPE POLICY SCRATCH
#
# The run-cost measure on a real benchmark with its tiny workload
# (docs/run-cost.md): `mlgo-eval run-cost POLICY RECIPE` twice, checking
#   - the cachegrind counts, and so the costs, are the same in both runs
#     (the second is served the cached builds, and with --verify-builds
#     makes both again: the programs must be the cached ones);
#   - the policy's program prints what the plain program prints, and costs
#     something else (else the test shows nothing);
#   - what was run is what the evaluator measures: every object of both
#     builds has the .text `mlgo-eval run` reports for its module.
set -euo pipefail
build="$(realpath "$1")" recipe="$2" policy="$3" scratch="$(realpath -m "$4")"
apps="$build/apps"
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
enter_scratch "$scratch"

measure() { # MARKDOWN [FLAGS…]
  local markdown=$1
  shift
  "$apps/mlgo-eval" run-cost "$policy" "$recipe" --workload tiny --wall-runs 2 "$@" \
    --work-dir "$scratch/work" --markdown "$markdown" >"$markdown.log" 2>&1 ||
    fail "mlgo-eval run-cost failed: $(tail -n 5 "$markdown.log")"
}
measure first.md
measure second.md --verify-builds
row() { grep "^| $recipe |" "$1" || fail "no row for $recipe in $1: $(cat "$1")"; }
costs() { row "$1" | awk -F'|' '{print $3, $4, $5, $6}'; }
[ "$(costs first.md)" = "$(costs second.md)" ] ||
  fail "the counts changed between two runs: $(costs first.md) / $(costs second.md)"
row first.md | grep -q '| same |$' || fail "the outputs differ: $(row first.md)"
read -r plain with _ < <(costs first.md)
[ "$plain" != "$with" ] || fail "the policy's program costs what the plain one costs ($plain)"
echo "run cost: $(row first.md)"

# Parity with the evaluator, object by object, for both builds.
text_bytes() {
  "$tools/llvm-size" -A "$1" | awk '$1==".text" || $1 ~ /^\.text\./ {s += $2} END {print s + 0}'
}
corpus="$build/corpora/$recipe/corpus"
check_build() { # POLICY_FOR_EVAL BUILD_DIR
  "$apps/mlgo-eval" run "$1" "$corpus" --no-baseline-cache 2>&1 |
    awk '$2=="ok" && NF==6 {print $1, $4}' >expected.txt
  [ -s expected.txt ] || fail "no module sizes from mlgo-eval run $1"
  local module bytes actual mismatches=0
  while read -r module bytes; do
    actual="$(text_bytes "$2/$module")"
    [ "$actual" = "$bytes" ] || {
      echo "  $module: .text $actual B in the benchmark build, $bytes B in the evaluator"
      mismatches=$((mismatches + 1))
    }
  done <expected.txt
  [ "$mismatches" -eq 0 ] || fail "$mismatches objects of $2 differ from the evaluator"
  echo "parity: $(wc -l <expected.txt) objects of $(basename "$(dirname "$2")") as the evaluator reports"
}
plain_build=$(find "$scratch/work/builds" -maxdepth 1 -name "$recipe-Oz-plain-*" ! -name '*.log')
check_build heuristic "$plain_build/build"
policy_build=$(find "$scratch/work/builds" -maxdepth 1 -name "$recipe-Oz-*" ! -name '*-plain-*' ! -name '*.log')
[ "$(echo "$policy_build" | wc -l)" = 1 ] || fail "expected one policy build: $policy_build"
check_build "$policy" "$policy_build/build"
