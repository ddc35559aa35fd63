#!/usr/bin/env bash
# bench/pipeline-v7.sh [OUT]
#
# The pass-pipeline task's seventh round (docs/pass-pipeline.md, "One
# pipeline searched on the wide training set"): rounds 4-6 found that the
# chooser is not what limits the combined policy on unseen code, the set's
# pipelines are (the one every set holds, `combined`, was searched on seven
# small code bases and drops GVN, which makes json-c larger under the
# inlining policy). So:
#   1. wide-greedy: the greedy program search from -Oz, every candidate with
#      inlining-oz, on 10 modules of each of the split's 24 training code
#      bases (--sample 10; bucket round robin by size), regression weight 1
#      (the task's default, chosen on validation in round 1). Its measure
#      log (--checkpoint) makes it resumable: a killed run continues from
#      the pipelines it had compiled;
#   2. wide-greedy and the shipped pipeline-inlining-oz on validation. The
#      rule (the task's, fixed before round 1): among the candidates with no
#      validation code base above -Oz, the fewest modules larger;
#   3. the chosen one and wide-greedy on test.
# One step after the other (2 cores); a finished step is not run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v7}"
mkdir -p "$out"
eval="$build/apps/mlgo-eval"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
train=($(sed -n '/^train = \[/,/^\]/p' configs/inlining-split.toml | grep -o '"[^"]*"' | tr -d '"'))
[ "${#train[@]}" = 24 ] || { echo "pipeline-v7: expected 24 training code bases, read ${#train[@]}" >&2; exit 1; }

# 1. The search (resumes from its measure log).
search wide-greedy --inliner inlining-oz --regression-weight 1 --sample "${MLGO_V7_SAMPLE:-10}" \
  --checkpoint "$out/wide-greedy.measures.tsv"

# 2. Validation, and the rule.
cp -n "$shipped_policy" "$out/shipped.json"
best="" fewest=""
: >"$out/validation.txt"
for name in shipped wide-greedy; do
  judge "$name" validation
  f="$out/$name.validation.md"
  echo "$name: validation $(total "$f") %, $(larger "$f") modules larger, $(above "$f") code bases above -Oz" |
    tee -a "$out/validation.txt"
  [ "$(above "$f")" = 0 ] || continue
  if [ -z "$best" ] || [ "$(larger "$f")" -lt "$fewest" ]; then best=$name fewest=$(larger "$f"); fi
done
echo "chosen by the rule: ${best:-none}" | tee -a "$out/validation.txt"
# 3. Test (the rule's choice is read back from the lines above).
for name in shipped wide-greedy; do judge "$name" test; done
echo "tables in $out/*.md"
