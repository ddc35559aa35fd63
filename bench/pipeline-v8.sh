#!/usr/bin/env bash
# bench/pipeline-v8.sh [OUT]
#
# The pass-pipeline task's eighth round (docs/pass-pipeline.md, "A choice
# over the wide search's steps"). Round 7's one pipeline searched on the
# wide training set is smaller on unseen code than any earlier choice, but
# one of its changes (-GVN under the inliner policy) costs on some modules.
# A per-module choice can keep such a change off the modules it hurts if
# the pool holds the search's path: so
#   1. the pool of round 6 (-Oz, bench/pipeline-v3.sh's six steps and
#      `combined`) plus bench/pipeline-v7.sh's six steps, each with LLVM's
#      inliner and with inlining-oz, on round 6's wide training sample (30
#      modules of each of 24 code bases). Round 6's stored measures are
#      copied and only the new pipelines compiled (--pool-measures keeps
#      columns by pipeline); likewise on the validation code bases, for the
#      learning data of bench/choice-models.py;
#   2. the tool's cost vote with k = 5, 10 and 20 neighbours. The rule,
#      round 6's, written to RULE.txt by this script before any figure is
#      computed: among the k with no held-out training code base above -Oz
#      (leave one code base out, choice-models.py) and no validation code
#      base above -Oz, the smallest validation total; then the task's rule
#      between it and the shipped pipeline-inlining-oz (no validation code
#      base above -Oz, then the fewest modules larger);
#   3. all of them on test, for the record.
# Resumable: a finished step is not run again. One step after the other.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v8}"
v3="${MLGO_V3_DIR:-$build/pipeline-v3}"
v4="${MLGO_V4_DIR:-$build/pipeline-v4}"
v5="${MLGO_V5_DIR:-$build/pipeline-v5}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"

cat >"$out/RULE.txt" <<'EOF'
Rule fixed before any figure of round 8 was computed (bench/pipeline-v8.sh):
among the tool's cost vote with k = 5, 10, 20 over the round-8 pool, those
with no held-out training code base above -Oz (leave one code base out,
bench/choice-models.py, "knn k=K" rows) and no validation code base above
-Oz; of those, the smallest validation total. Then against the shipped
pipeline-inlining-oz: among those with no validation code base above -Oz,
the fewest validation modules larger (the task's rule since round 1).
EOF

# Round 7's path (build/pipeline-v7/wide-greedy.md), one file per step.
step_files wide-step +optimizer-last=mergefunc -IndVarSimplifyPass -GVNPass -LICMPass \
  -InstSimplifyPass +scalar-optimizer-late=gvn-hoist,simplifycfg
pool=()
for n in 1 2 3 4 5 6; do pool+=(--pool "$v3/program-step$n.json"); done
pool+=(--pool "$v3/combined-pipeline.json")
for n in 1 2 3 4 5 6; do pool+=(--pool "$out/wide-step$n.json"); done
for f in "${pool[@]}"; do
  [ "$f" = --pool ] || [ -s "$f" ] || { echo "missing $f: run bench/pipeline-v3.sh first" >&2; exit 1; }
done
choice=(--program-search choice --inliner inlining-oz --vote cost)

# 1. The pool's measures (round 6's copied, the new pipelines compiled).
[ -s "$out/wide.pool.tsv" ] || cp "$v4/wide.pool.tsv" "$out/wide.pool.tsv"
[ -s "$out/validation.pool.tsv" ] || cp "$v5/validation.pool.tsv" "$out/validation.pool.tsv"
read -r -a train < <(sed 's/^wide: [0-9]* training code bases: //' "$v4/wide.code-bases")
for k in 5 10 20; do
  data=()
  [ "$k" = 5 ] && data=(--choice-data "$out/wide.data.tsv")
  search "wide-cost-k$k" "${choice[@]}" --neighbours "$k" --sample "${MLGO_V4_SAMPLE:-30}" \
    --pool-measures "$out/wide.pool.tsv" "${data[@]}" "${pool[@]}"
done
if [ ! -s "$out/validation.data.tsv" ]; then
  "$eval" pipeline-search lua xz box2d ninja --program "${choice[@]}" \
    --pool-measures "$out/validation.pool.tsv" "${pool[@]}" -o "$out/validation-data.json" \
    --choice-data "$out/validation.data.tsv" >"$out/validation-data.log" 2>&1
fi
[ -s "$out/choice-models.txt" ] ||
  /usr/bin/python3 bench/choice-models.py "$out/wide.data.tsv" "$out/validation.data.tsv" \
    >"$out/choice-models.txt"

# 2. Validation, and the rule.
heldOut() { # K: the worst held-out training code base of the knn row (%)
  grep "^| knn k=$1 " "$out/choice-models.txt" | sed -n 's/^| [^|]*| [^|]*worst code base \([-+0-9.]*\) %).*/\1/p' |
    head -n 1
}
cp -n "$shipped_policy" "$out/shipped.json"
: >"$out/validation.txt"
best="" bestTotal=""
for k in 5 10 20; do
  name="wide-cost-k$k"
  judge "$name" validation
  f="$out/$name.validation.md"
  worst=$(heldOut "$k")
  echo "$name: held out worst ${worst:-?} %, validation $(total "$f") %, $(larger "$f") modules larger, $(above "$f") code bases above -Oz" |
    tee -a "$out/validation.txt"
  [ -n "$worst" ] && awk -v w="$worst" 'BEGIN {exit !(w <= 0)}' && [ "$(above "$f")" = 0 ] || continue
  if [ -z "$best" ] || awk -v a="$(total "$f")" -v b="$bestTotal" 'BEGIN {exit !(a < b)}'; then
    best=$name bestTotal=$(total "$f")
  fi
done
echo "chooser chosen by the rule: ${best:-none}" | tee -a "$out/validation.txt"
judge shipped validation
chosen=shipped
if [ -n "$best" ]; then
  s="$out/shipped.validation.md" c="$out/$best.validation.md"
  if [ "$(above "$s")" != 0 ] || [ "$(larger "$c")" -lt "$(larger "$s")" ]; then chosen=$best; fi
fi
echo "against the shipped pipeline-inlining-oz ($(larger "$out/shipped.validation.md") modules larger): $chosen" |
  tee -a "$out/validation.txt"

# 3. Test, for the record.
for name in shipped wide-cost-k5 wide-cost-k10 wide-cost-k20; do judge "$name" test; done
echo "tables in $out/*.md"
