#!/usr/bin/env bash
# bench/pipeline-v15.sh [OUT]
#
# The pass-pipeline task's fifteenth round: ten code bases no round has
# seen decide among round 14's guarded choices. Round 14 chose among 120
# candidates on sixteen validation code bases; nineteen or more of them kept
# all sixteen at or below -Oz, so "none above" on sixteen code bases no
# longer separates them well, and the shipped policy still has a test code
# base above -Oz (json-c). Ten recipes added on 2026-12-07 before any
# policy was run on them (docs/corpora.md) widen the validation to 26 code
# bases: C: Mbed TLS, libuv, Brotli, Jansson, GIFLIB, libogg; C++: RE2,
# muparser, gflags, pugixml (221 modules).
#
# The pool: the shipped choice's set (-Oz; wide-greedy with and without
# the inliner policy; step6 with it) measured on the ten (one
# pipeline-search run, as round 13 measured the sixteen). Candidates,
# scored outside the tool (bench/choice-guard.py, round 14's training
# data): the shipped 613 examples (round 14's cost step ruled out every
# training module as examples), k 10, 20, 40; margin 0, 0.005, 0.01, 0.02;
# novelty off, 0.8, cross:0.5, cross:0.8, cross:0.95; 60 candidates, the
# shipped policy (k 40, margin 0.005, cross:0.8) among them.
#
# The rule, written before any figure of this round was computed (the
# script copies it to RULE.txt):
#   1. the 26 code bases together (round 13's sixteen and the ten);
#   2. the fewest code bases above -Oz, then the smallest total;
#   3. the winner ships as pipeline-inlining-oz (the shipped one becomes
#      -v4) unless it is the shipped configuration;
#   4. test is computed for the winner after it is chosen, never to choose;
#      the shipped pipeline-oz and inlining-oz, alone, and the best-of
#      policy behind --mlgo-best-of are reported on the ten for the
#      record (no choice reads them).
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v15}"
v13="${MLGO_V13_DIR:-$build/pipeline-v13}"
v14="${MLGO_V14_DIR:-$build/pipeline-v14}"
eval="$build/apps/mlgo-eval"
base="${MLGO_V15_BASE:-configs/policies/pipeline-inlining-oz-v4.json}" # round 14's, shipped then
fresh=(mbedtls libuv1 brotli jansson giflib libogg re2 muparser gflags pugixml)
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#      record/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
[ -s "$v13/validation.data.tsv" ] || bench/pipeline-v13.sh "$v13"
[ -s "$v14/train.data.tsv" ] || bench/pipeline-v14.sh "$v14"
ensure_corpora "${fresh[@]}"

# 1. The set's pool on the ten, then the 26 code bases' learning data.
set_pool_data fresh "$v13" "${fresh[@]}"
[ -s "$out/validation26.data.tsv" ] ||
  { cat "$v13/validation.data.tsv" && tail -n +2 "$out/fresh.data.tsv"; } >"$out/validation26.data.tsv"

# 2. The candidates outside the tool (columns as in rounds 13 and 14).
guard() {
  /usr/bin/python3 bench/choice-guard.py "$base" "$out/validation26.data.tsv" --columns 0,4,1,5 \
    --train "$v14/train.data.tsv" --examples shipped --neighbours 10,20,40 \
    --margins 0,0.005,0.01,0.02 --novelty 1,0.8,cross:0.5,cross:0.8,cross:0.95 --agreement 0 "$@"
}
[ -s "$out/grid.txt" ] || guard --markdown "$out/grid.md" --rule "$out/winner.txt" >"$out/grid.txt"
fields() { sed 's/[a-z_]*=//g; s/ %//' "$1"; }
read -r examples k margin novelty distance agreement wtotal wabove _ < <(fields "$out/winner.txt")

# 3. The decision, the winner's file and its reports.
{
  echo "winner: k $k, margin $margin, novelty $novelty: 26 code bases $wtotal %, $wabove above -Oz"
  if [ "$k" = 40 ] && [ "$margin" = 0.005 ] && [ "$novelty" = cross:0.8 ]; then
    echo "decision: the shipped configuration wins; nothing changes"
  else
    echo "decision: the winner replaces pipeline-inlining-oz"
  fi
} | tee "$out/decision.txt"
[ -s "$out/winner.json" ] ||
  guard --only "$examples,$k,$margin,$novelty,$agreement" --write-policy "$out/winner.json" >/dev/null
report_on winner "$out/winner.json" fresh "${fresh[@]}"
echo "winner, by its own compiles: the ten $(total "$out/winner.fresh.md") %, $(above "$out/winner.fresh.md") above -Oz" |
  tee -a "$out/decision.txt"
judge winner test
echo "winner: test $(total "$out/winner.test.md") %, $(above "$out/winner.test.md") code bases above -Oz" |
  tee -a "$out/decision.txt"

# 4. For the record: the shipped policies of both tasks on the ten.
report_on pipeline-oz configs/policies/pipeline-oz.json fresh "${fresh[@]}"
report_on best-of pipeline-inlining-oz-best-of fresh "${fresh[@]}" --best-of
[ -s "$out/inlining-oz.fresh.md" ] ||
  "$eval" report inlining-oz "${fresh[@]}" --markdown "$out/inlining-oz.fresh.md" \
    --values "$out/inlining-oz.fresh.values" >"$out/inlining-oz.fresh.log" 2>&1
for name in pipeline-oz best-of inlining-oz; do
  echo "$name: the ten $(total "$out/$name.fresh.md") %, $(above "$out/$name.fresh.md") above -Oz"
done | tee "$out/record.txt"
