#!/usr/bin/env bash
# bench/pipeline-v14.sh [OUT]
#
# The pass-pipeline task's fourteenth round: the choice's examples from
# every training module, and a novelty threshold calibrated across code
# bases. Round 13's novelty guard took its threshold from the training
# examples' distances to each other, where a module's nearest example is
# usually from its own code base; unseen code has no such neighbour, and
# the guard sent half of the validation modules to -Oz. Round 13's
# shipped policy also votes among 613 examples, 30 from each training code
# base, out of 4,069 training modules.
#
# The pool: the shipped choice's set (-Oz; wide-greedy with and without
# the inliner policy; step6 with it), measured on every module of the 24
# training code bases (no --sample). Validation and test as in round 13
# (its validation measures are reused). Candidates, scored outside the
# tool (bench/choice-guard.py --train):
#   examples: the shipped policy's 613, or every training module;
#   k 10, 20, 40; margin 0, 0.005, 0.01, 0.02;
#   novelty: off; 0.8 among all examples (round 13's); cross:0.5,
#     cross:0.8, cross:0.95 (quantiles of each example's distance to the
#     nearest example of another code base);
#   agreement off (round 13: it changed little);
# 120 candidates, the shipped policy among them.
#
# The rule, written before any figure of this round was computed (the
# script copies it to RULE.txt):
#   1. eligible: no validation code base above -Oz (the sixteen of round 13);
#   2. of the eligible, the smallest validation total; if none is
#      eligible, the fewest code bases above, then the total;
#   3. a winner with every training module as examples must also build Lua
#      from source at no more than 1.10x the shipped policy's CPU
#      (farm-bench -n 3, paired, median); if it does not, steps 1-2 are
#      taken again among the candidates with the shipped examples;
#   4. the winner ships as pipeline-inlining-oz (the shipped one becomes
#      -v3) unless it is the shipped configuration;
#   5. test is computed for the winner after it is chosen, never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v14}"
v13="${MLGO_V13_DIR:-$build/pipeline-v13}"
eval="$build/apps/mlgo-eval"
# The policy whose set the candidates share: the shipped one when the
# round was written, -v3 since round 14 replaced it.
base="${MLGO_V14_BASE:-configs/policies/pipeline-inlining-oz-v3.json}"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   5\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
[ -s "$v13/validation.data.tsv" ] || bench/pipeline-v13.sh "$v13"
read -r -a train < <(/usr/bin/python3 -c '
import tomllib
print(" ".join(tomllib.load(open("configs/inlining-split.toml", "rb"))["train"]))')
ensure_corpora "${train[@]}"

# 1. The set's pool on every training module (round 13's pool files).
set_pool_data train "$v13" "${train[@]}"

# 2. The candidates outside the tool (columns as in round 13).
columns=0,4,1,5
guard() {
  /usr/bin/python3 bench/choice-guard.py "$base" "$v13/validation.data.tsv" --columns "$columns" \
    --train "$out/train.data.tsv" --neighbours 10,20,40 --margins 0,0.005,0.01,0.02 \
    --novelty 1,0.8,cross:0.5,cross:0.8,cross:0.95 --agreement 0 "$@"
}
[ -s "$out/grid.txt" ] || guard --examples both --markdown "$out/grid.md" --rule "$out/winner.txt" >"$out/grid.txt"
[ -s "$out/winner-shipped.txt" ] ||
  guard --examples shipped --rule "$out/winner-shipped.txt" >"$out/grid-shipped.txt"
cat "$out/winner.txt"
fields() { sed 's/[a-z_]*=//g; s/ %//' "$1"; }
read -r examples k margin novelty distance agreement wtotal wabove _ < <(fields "$out/winner.txt")

# 3. The build cost of a winner with every training module as examples.
write_candidate() { # FILE EXAMPLES K MARGIN NOVELTY AGREEMENT
  [ -s "$1" ] || guard --only "$2,$3,$4,$5,$6" --write-policy "$1" >/dev/null
}
if [ "$examples" = all ]; then
  write_candidate "$out/winner-all.json" "$examples" "$k" "$margin" "$novelty" "$agreement"
  [ -s "$out/cost.txt" ] || farm-bench -n 3 --timeout 900 \
    --vs "bash bench/deploy/build-once.sh lua $out/build-shipped $base" -- \
    bash bench/deploy/build-once.sh lua "$out/build-all" "$out/winner-all.json" >"$out/cost.txt" 2>&1
  ratio=$(awk '/^A\/B cpu/ {print $4}' "$out/cost.txt") # the median
  echo "winner with every training module: Lua build CPU $ratio x the shipped policy's" |
    tee "$out/cost-decision.txt"
  if awk -v r="$ratio" 'BEGIN {exit !(r > 1.10)}'; then
    read -r examples k margin novelty distance agreement wtotal wabove _ < <(fields "$out/winner-shipped.txt")
  fi
fi

# 4. The decision, the winner's file and its reports.
{
  echo "winner: examples $examples, k $k, margin $margin, novelty $novelty, agreement $agreement: validation $wtotal %, $wabove code bases above -Oz"
  if [ "$examples" = shipped ] && [ "$k" = 40 ] && [ "$margin" = 0.005 ] && [ "$novelty" = 0.8 ]; then
    echo "decision: the shipped configuration wins; nothing changes"
  else
    echo "decision: the winner replaces pipeline-inlining-oz"
  fi
} | tee "$out/decision.txt"
write_candidate "$out/winner.json" "$examples" "$k" "$margin" "$novelty" "$agreement"
report_on winner "$out/winner.json" validation lua xz box2d ninja libyaml lzo2 libjpeg-turbo \
  hunspell snappy double-conversion jq libsodium speex jsoncpp fmtlib tinyxml2
echo "winner, by its own compiles: validation $(total "$out/winner.validation.md") % (scored outside the tool: $wtotal %)" |
  tee -a "$out/decision.txt"
judge winner test
echo "winner: test $(total "$out/winner.test.md") %, $(above "$out/winner.test.md") code bases above -Oz" |
  tee -a "$out/decision.txt"
