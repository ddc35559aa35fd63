#!/usr/bin/env bash
# bench/pipeline-v11.sh [OUT]
#
# The pass-pipeline task's eleventh round (docs/pass-pipeline.md, "Round 11:
# the cost vote's margin"). Rounds 8 and 10 lost to the shipped policy on
# validation modules made larger (32 against 28), not on bytes. The cost
# vote keeps the fallback (-Oz's pipeline with LLVM's inliner) unless
# another pipeline looks cheaper by more than --margin (default 0, never
# varied before): a larger margin trades bytes for fewer modules larger.
#   1. the cost vote, k = 20, over round 10's pool and stored measures (no
#      compile), with margins 0.002, 0.005 and 0.01;
#   2. the rule, written to RULE.txt before any figure is computed: among
#      them, those with no validation code base above -Oz; of those, the
#      fewest validation modules larger (ties: the smaller total); then
#      the task's rule against the shipped pipeline-inlining-oz (replaced
#      only with fewer validation modules larger);
#   3. round 9's six code bases (seen twice before) and test, for the record.
# Resumable: a finished step is not run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v11}"
v4="${MLGO_V4_DIR:-build/pipeline-v4}"
v10="${MLGO_V10_DIR:-build/pipeline-v10}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"

cat >"$out/RULE.txt" <<'RULE'
Rule fixed before any figure of round 11 was computed (bench/pipeline-v11.sh):
candidates: the cost vote with k = 20 over round 10's pool, margins 0.002,
0.005, 0.01. Among those with no validation code base above -Oz, the
fewest validation modules larger (ties: the smaller validation total).
Then against the shipped pipeline-inlining-oz: replaced only with fewer
validation modules larger (the task's rule since round 1). Round 9's six
code bases and test reported for the record, never used to choose.
RULE

# 1. The pool of round 10, its measures copied (nothing compiles).
v3="${MLGO_V3_DIR:-build/pipeline-v3}" v8="${MLGO_V8_DIR:-build/pipeline-v8}"
round10_pool "$v10"
[ -s "$out/wide.pool.tsv" ] || cp "$v10/wide.pool.tsv" "$out/wide.pool.tsv"
read -r -a train < <(sed 's/^wide: [0-9]* training code bases: //' "$v4/wide.code-bases")
margins=(0.002 0.005 0.01)
for m in "${margins[@]}"; do
  search "margin-$m" --program-search choice --inliner inlining-oz --vote cost --neighbours 20 \
    --margin "$m" --sample "${MLGO_V4_SAMPLE:-30}" --pool-measures "$out/wide.pool.tsv" "${pool[@]}"
done

# 2. Validation, and the rule.
against_shipped "${margins[@]/#/margin-}"

# 3. For the record.
for_the_record shipped "${margins[@]/#/margin-}"
echo "tables in $out/*.md"
