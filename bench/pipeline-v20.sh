#!/usr/bin/env bash
# bench/pipeline-v20.sh [OUT]
#
# The pass-pipeline task's twentieth round: the choice's configuration
# chosen by leaving whole code bases out, over every code base outside
# test. Rounds 13 to 18 chose k, the margin and the novelty guard on 16 or
# 26 validation code bases, and every unseen set since had one code base
# above -Oz under the policy chosen before it (round 19: xxHash). Round 19
# refit the examples on 58 code bases but kept round 17's configuration.
# With the third unseen set read, 66 code bases outside test have learning
# data; leaving each out in turn and choosing its modules from the other
# 65 is what an unseen code base meets, 66 times (bench/choice-loco.py).
#
# The rule, written before this script's first run (the script copies it
# to RULE.txt):
#   1. examples: every module of the 66 code bases outside test (the 24
#      training code bases, the 26 validation ones, the eight of the
#      second unseen set and the eight of the third: round 19's data);
#   2. candidates: k 10, 20, 40; margin 0, 0.005, 0.01, 0.02; novelty off,
#      0.8, cross:0.5, cross:0.8, cross:0.95 (60; agreement 0, no second
#      opinion), each scored by leaving every code base out in turn;
#   3. the fewest held-out code bases above -Oz, then the smallest total;
#   4. the winner, its examples every module of the 66, ships as
#      pipeline-inlining-oz (the shipped one becomes -v7), and with the
#      distilled inliner as pipeline-inlining-oz-small (the shipped one
#      becomes -small-v2), unless it is round 19's configuration (k 20,
#      margin 0.005, cross:0.8) or a Lua build with it costs more than
#      1.10x the CPU of one with the shipped policy (3 paired runs, median
#      ratio);
#   5. test is computed after the choice, never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v20}"
v14="${MLGO_V14_DIR:-$build/pipeline-v14}"
v15="${MLGO_V15_DIR:-$build/pipeline-v15}"
v19="${MLGO_V19_DIR:-$build/pipeline-v19}"
eval="$build/apps/mlgo-eval"
base=configs/policies/pipeline-inlining-oz-v5.json # the file round 17's examples were written into
shipped=configs/policies/pipeline-inlining-oz-v7.policy             # round 19's, shipped then
shipped_small=configs/policies/pipeline-inlining-oz-small-v2.policy # round 19's, shipped then
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   5\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
data=("$v14/train.data.tsv" "$v15/validation26.data.tsv" "$v19/unseen8.data.tsv" "$v19/fresh.data.tsv")
for f in "${data[@]}"; do
  [ -s "$f" ] || { echo "missing $f: run bench/pipeline-v14.sh, -v15.sh and -v19.sh first" >&2; exit 1; }
done
[ -s "$out/all.data.tsv" ] || {
  cat "${data[0]}"
  for f in "${data[@]:1}"; do tail -n +2 "$f"; done
} >"$out/all.data.tsv"
# 1-3. The grid, each code base left out in turn (minutes).
[ -s "$out/grid.txt" ] ||
  /usr/bin/python3 bench/choice-loco.py "$out/all.data.tsv" --columns 0,4,1,5 --rule "$out/winner.txt" \
    >"$out/grid.txt"
read -r _ k margin novelty _ _ ltotal labove _ < <(sed 's/[a-z_]*=//g; s/ %//' "$out/winner.txt")
echo "winner: k $k, margin $margin, novelty $novelty: leaving each of 66 code bases out $ltotal %, $labove above -Oz" |
  tee "$out/decision.txt"
if [ "$k,$margin,$novelty" = "20,0.005,cross:0.8" ]; then
  echo "the winner is round 19's configuration, shipped already: nothing ships" | tee -a "$out/decision.txt"
  exit 0
fi
# 4. The winner with every module of the 66 as examples, and its cost.
if [ ! -s "$out/winner.policy" ]; then
  /usr/bin/python3 bench/choice-guard.py "$base" "${data[3]}" --columns 0,4,1,5 --train "$out/all.data.tsv" \
    --only "all,$k,$margin,$novelty,0" --write-policy "$out/winner.json" >/dev/null
  "$eval" rewrite-policy "$out/winner.json" -o "$out/winner.policy" --blobs >/dev/null
fi
# 4-5. Its cost; then, if it ships, test after the choice.
ship_after_lua_and_test "$shipped" "$shipped_small" || exit 0
