#!/usr/bin/env bash
# bench/pipeline-v10.sh [OUT]
#
# The pass-pipeline task's tenth round (docs/pass-pipeline.md, "Round 10:
# pass parameters"). The greedy search of round 7 run again with pass
# parameters among its moves (mlgo-eval pipeline-search --parameter-moves,
# build/pipeline-params/wide-params.json) keeps GVN (as gvn<no-pre>) where
# round 7 skipped it, the change that grew fresh C code in rounds 8 and 9.
#   1. its four steps, one pipeline each, with inlining-oz (as searched);
#   2. a per-module choice (the tool's cost vote, k = 20 as round 8 chose)
#      over round 8's pool plus the search's steps 2-4 (step 1 is round
#      7's step 1), each with LLVM's inliner and with inlining-oz: round 8's
#      stored measures copied, only the six new columns compiled;
#   3. the rule, written to RULE.txt before any figure is computed: among
#      the five candidates with no validation code base above -Oz, the
#      fewest validation modules larger (then the smaller total); then the
#      task's rule against the shipped pipeline-inlining-oz (it is replaced
#      only by one with fewer modules larger, or if it is itself above -Oz
#      somewhere);
#   4. the six code bases of round 9 (seen once, by round 9) and test, for
#      the record.
# Resumable: a finished step is not run again. Run it from a frozen copy of
# the tools (MLGO_BUILD_DIR) if the build may change meanwhile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v10}"
v4="${MLGO_V4_DIR:-build/pipeline-v4}"
v8="${MLGO_V8_DIR:-build/pipeline-v8}"
v3="${MLGO_V3_DIR:-build/pipeline-v3}"
searched="${MLGO_PARAMS_SEARCH:-build/pipeline-params/wide-params.json}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
[ -s "$searched" ] || { echo "pipeline-v10: no $searched (the parameter search)" >&2; exit 1; }

cat >"$out/RULE.txt" <<'EOF'
Rule fixed before any figure of round 10 was computed (bench/pipeline-v10.sh):
candidates: the parameter search's steps 1-4, each one pipeline with
inlining-oz, and the cost vote with k = 20 over round 8's pool plus steps
2-4. Among those with no validation code base above -Oz, the fewest
validation modules larger (ties: the smaller validation total). Then
against the shipped pipeline-inlining-oz: the candidate replaces it only
with fewer validation modules larger and no validation code base above
-Oz (the task's rule since round 1). Holdout (round 9's six code bases,
seen once) and test reported for the record, never used to choose.
EOF

# The search's path, one policy per step: with its inliner (as searched)
# and, for the pool, without (the choice adds each inliner itself).
/usr/bin/python3 - "$searched" "$out" <<'PY'
import json, sys
searched, out = json.load(open(sys.argv[1])), sys.argv[2]
# The path as the search took it (its markdown's order), as changes.
steps = [("add", {"at": "optimizer-last", "passes": "mergefunc"}),
         ("parameters", ("gvn", "no-pre")), ("skip", "IndVarSimplifyPass"),
         ("skip", "InstSimplifyPass")]
pipeline = {"skip": [], "add": [], "parameters": {}}
for n, (kind, change) in enumerate(steps, 1):
    if kind == "parameters":
        pipeline["parameters"][change[0]] = change[1]
    else:
        pipeline[kind].append(change)
    step = {k: v for k, v in pipeline.items() if v}
    policy = {"format": "mlgo-es-policy", "version": 2, "kind": "pipeline", "pipeline": step}
    json.dump(policy, open(f"{out}/params-step{n}.json", "w"), indent=1)
    policy["inliner"] = searched["inliner"]
    json.dump(policy, open(f"{out}/params-step{n}-inl.json", "w"))
# The last step is the search's result.
assert {k: v for k, v in pipeline.items() if v} == searched["pipeline"], searched["pipeline"]
PY

# 1.-2. The candidates.
round10_pool "$out"
[ -s "$out/wide.pool.tsv" ] || cp "$v8/wide.pool.tsv" "$out/wide.pool.tsv"
read -r -a train < <(sed 's/^wide: [0-9]* training code bases: //' "$v4/wide.code-bases")
search choice-k20 --program-search choice --inliner inlining-oz --vote cost --neighbours 20 \
  --sample "${MLGO_V4_SAMPLE:-30}" --pool-measures "$out/wide.pool.tsv" "${pool[@]}"

# 3. Validation, and the rule.
candidates=(params-step1-inl params-step2-inl params-step3-inl params-step4-inl choice-k20)
against_shipped "${candidates[@]}"

# 4. For the record: round 9's six code bases and test.
for_the_record shipped "${candidates[@]}"
echo "tables in $out/*.md"
