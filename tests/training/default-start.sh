#!/usr/bin/env bash
# default-start.sh ES_TRAIN PPO_TRAIN MLGO_EVAL TRAIN_CORPUS VALIDATION_CORPUS OUT
#
# The defaults never make code worse: es-train and ppo-train with every
# option at its default but the run's length start from exactly the
# compiler's decisions (validated at step 0: reward 0 against -Oz) and keep
# the best validated policy, so the policy file they write is never larger
# than -Oz on the validation code — checked by compiling it there.
set -euo pipefail
es="$1" ppo="$2" eval_tool="$3" train="$4" validation="$5" out="$6"
rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}

# check NAME: the run's start validated at exactly -Oz, and its policy file
# is no larger than -Oz on the validation corpus.
check() {
  local name="$1"
  grep -q "starting from the compiler's own decisions" "$out/$name.log" ||
    fail "$name: the first screen does not say where the run starts ($out/$name.log)"
  grep -q "^policy: .* (kept: " "$out/$name.log" || fail "$name: no kept policy line"
  "$eval_tool" report "$out/$name.json" "$validation" --values "$out/$name.values" \
    >"$out/$name.report" 2>&1 || fail "$name: mlgo-eval report failed"
  # values: name modules failed baseline policy smaller larger same
  awk -F'\t' -v name="$name" '!/^#/ {
      if ($5 + 0 > $4 + 0) { print "FAIL: " name ": the kept policy is larger than -Oz on the validation code: " $5 " > " $4; exit 1 }
      print name ": the kept policy on the validation code: " $5 " bytes, -Oz " $4 }' \
    "$out/$name.values"
  grep "^policy:" "$out/$name.log"
}

"$es" --corpus "$train" --validation-corpus "$validation" --validation-interval 2 --steps 4 \
  --directions 4 --modules-per-step 4 -o "$out/es.h5" --policy-output "$out/es.json" \
  >"$out/es.log" 2>&1 || { cat "$out/es.log"; fail "es-train failed"; }
check es
"$ppo" --corpus "$train" --validation-corpus "$validation" --validation-interval 1 \
  --iterations 2 --modules-per-iteration 4 -o "$out/ppo.h5" --policy-output "$out/ppo.json" \
  >"$out/ppo.log" 2>&1 || { cat "$out/ppo.log"; fail "ppo-train failed"; }
check ppo
echo "default-start: ok"
