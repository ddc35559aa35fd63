#!/usr/bin/env bash
# bench/pipeline-v3.sh [OUT]
#
# The pass-pipeline task's third round (docs/pass-pipeline.md, "Choosing
# who inlines too"): a per-module choice whose pool holds every pipeline
# twice, with LLVM's inlining heuristic and with the shipped inlining policy
# (`--inliner inlining-oz`), so that the choice picks per module both the
# pipeline and who inlines. One step after the other (2 cores); a finished
# step (its OUT/NAME.md exists) is not run again, so the script resumes.
#   1. the pool: -Oz and the program search's pipeline after each of its six
#      steps (docs, "Without gvn-sink"; the sixth is pipeline-oz-single),
#      written here as policy files so that the 35-minute search need not
#      run again;
#   2. choice-inl4, choice-inl6: the choice with sets of 4 and 6 pipelines,
#      learned on the training code (127 modules), judged on validation and
#      test; the baselines beside them: the shipped pipeline-oz with
#      inlining-oz embedded (pipeline-oz+inl), and the same learning without
#      the inliner (choice-noinl4).
# The validation rule (fixed before the runs, as for pipeline-oz): among the
# candidates with no validation code base above -Oz, the fewest modules
# larger.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v3}"
mkdir -p "$out"
eval="$build/apps/mlgo-eval"
train=(bzip2 libpng lz4 expat zstd yaml-cpp zlib)
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"

# The program search's steps (docs/pass-pipeline.md, "Without gvn-sink").
step_files program-step -InstSimplifyPass -IndVarSimplifyPass -LowerExpectIntrinsicPass \
  +optimizer-last=mergefunc +scalar-optimizer-late=gvn-hoist,simplifycfg \
  +optimizer-last=ipsccp,globalopt,deadargelim,globaldce
pool=()
for n in 1 2 3 4 5 6; do pool+=(--pool "$out/program-step$n.json"); done

search choice-noinl4 --program-search choice "${pool[@]}"
search choice-inl4 --program-search choice --inliner inlining-oz "${pool[@]}"
search choice-inl6 --program-search choice --inliner inlining-oz --set-size 6 "${pool[@]}"
# The shipped choice with the shipped inliner in all its pipelines.
if [ ! -s "$out/pipeline-oz+inl.json" ]; then
  python3 - configs/policies/pipeline-oz.json configs/policies/inlining-oz.policy \
    "$out/pipeline-oz+inl.json" <<'PY'
import json, sys
sys.path.insert(0, "bench")
import policy_file
pipeline, inliner = (policy_file.load(p) for p in sys.argv[1:3])
pipeline["inliner"] = inliner
json.dump(pipeline, open(sys.argv[3], "w"))
PY
fi
for name in choice-noinl4 choice-inl4 choice-inl6 pipeline-oz+inl; do
  judge "$name" validation
done
for name in choice-noinl4 choice-inl4 choice-inl6 pipeline-oz+inl; do
  judge "$name" test
done

# 3. The program search continued from pipeline-oz-single with inlining-oz in
#    every candidate (as bench/pipeline-v2.sh's "combined"), then a choice
#    whose pool also holds that pipeline (with either inliner).
search combined --start pipeline-oz-single --inliner inlining-oz --regression-weight 1
if [ ! -s "$out/combined-pipeline.json" ]; then # its pipeline without the inliner
  python3 - "$out/combined.json" "$out/combined-pipeline.json" <<'PY'
import json, sys
policy = json.load(open(sys.argv[1]))
policy.pop("inliner", None)
json.dump(policy, open(sys.argv[2], "w"), indent=1)
PY
fi
search choice-comb4 --program-search choice --inliner inlining-oz "${pool[@]}" \
  --pool "$out/combined-pipeline.json"
for name in combined choice-comb4; do
  judge "$name" validation
  judge "$name" test
done
echo "tables in $out/*.md"
