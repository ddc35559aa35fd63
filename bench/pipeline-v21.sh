#!/usr/bin/env bash
# bench/pipeline-v21.sh [OUT]
#
# The pass-pipeline task's twenty-first round: how the neighbours vote.
# Round 20 chose k, the margin and the novelty guard by leaving each of the
# 66 code bases outside test out (bench/choice-loco.py); under every one
# of its 60 candidates cJSON and xxHash stayed above -Oz, modules where
# every alternative is larger but whose nearest examples gained on the
# mean. The neighbours' weighted mean is one way to vote; this round
# scores others the same way (bench/choice-loco.py --votes):
#   median        the weighted median of the neighbours' costs;
#   ucb:L         the mean plus L weighted standard deviations (pessimistic);
#   bases         each code base among the neighbours one voice (the mean
#                 of its neighbours' costs), the voices averaged: examples
#                 of one code base are not independent;
#   one-per-base  the voters are the nearest example of each code base,
#                 the k nearest of those, averaged as the mean;
# and a wider set of alternatives: besides the shipped four (pool columns
# 0,4,1,5), the six of the pool (0,4,1,5,3,2: -Oz with the inliner policy
# and the second pipeline with LLVM's inliner added).
#
# The rule, written before this script's first run (the script copies it
# to RULE.txt):
#   1. examples: every module of the 66 code bases outside test (round
#      20's build/pipeline-v20/all.data.tsv);
#   2. candidates: votes mean, median, bases, one-per-base, ucb:0.25,
#      ucb:0.5; k 10, 20, 40; margin 0, 0.005, 0.01, 0.02; novelty off,
#      0.8, cross:0.5, cross:0.8, cross:0.95; alternatives 0,4,1,5 or
#      0,4,1,5,3,2 (720), each scored by leaving every code base out in
#      turn;
#   3. the fewest held-out code bases above -Oz, then the smallest total;
#   4. the winner, its examples every module of the 66, ships as
#      pipeline-inlining-oz (the shipped one becomes -v8), and with the
#      distilled inliner as pipeline-inlining-oz-small (the shipped one
#      becomes -small-v3), unless it is round 20's configuration (mean,
#      0,4,1,5, k 20, margin 0.01, cross:0.95) or a Lua build with it costs
#      more than 1.10x the CPU of one with the shipped policy (3 paired
#      runs, median ratio); a vote other than the mean is built into the
#      tool (PipelineChoice) before it is written;
#   5. test, and the fourth unseen set (added this session, built by no
#      round), are computed after the choice, never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v21}"
v20="${MLGO_V20_DIR:-$build/pipeline-v20}"
v19="${MLGO_V19_DIR:-$build/pipeline-v19}"
eval="$build/apps/mlgo-eval"
base=configs/policies/pipeline-inlining-oz-v5.json # the file round 17's examples were written into
shipped=configs/policies/pipeline-inlining-oz-v8.policy             # round 20's, shipped then
shipped_small=configs/policies/pipeline-inlining-oz-small-v3.policy # round 20's, shipped then
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   5\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
data="$v20/all.data.tsv"
[ -s "$data" ] || { echo "missing $data: run bench/pipeline-v20.sh first" >&2; exit 1; }
# 1-3. The grid, each code base left out in turn, once per set of
# alternatives (minutes each).
for columns in 0,4,1,5 0,4,1,5,3,2; do
  [ -s "$out/grid.$columns.txt" ] ||
    /usr/bin/python3 bench/choice-loco.py "$data" --columns "$columns" \
      --votes mean,median,bases,one-per-base,ucb:0.25,ucb:0.5 --rule "$out/winner.$columns.txt" \
      >"$out/grid.$columns.txt.part"
  [ -s "$out/grid.$columns.txt" ] || mv "$out/grid.$columns.txt.part" "$out/grid.$columns.txt"
done
# The winner of the two: the fewest above, then the smallest total.
for columns in 0,4,1,5 0,4,1,5,3,2; do
  sed "s/^/columns=$columns /" "$out/winner.$columns.txt"
done | sed 's/ total=\([-+0-9.]*\) above=\([0-9]*\)/ &/' |
  awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^(total|above)=/) {split($i, kv, "="); v[kv[1]] = kv[2]}
        print v["above"], v["total"], $0}' | sort -k1,1n -k2,2g | head -1 | cut -d' ' -f3- >"$out/winner.txt"
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" "$out/winner.txt" | head -1; }
columns=$(field columns) k=$(field k) margin=$(field margin) novelty=$(field novelty)
vote=$(field vote) ltotal=$(field total) labove=$(field above)
echo "winner: vote $vote, alternatives $columns, k $k, margin $margin, novelty $novelty:" \
  "leaving each of 66 code bases out $ltotal %, $labove above -Oz" | tee "$out/decision.txt"
if [ "$vote,$columns,$k,$margin,$novelty" = "mean,0,4,1,5,20,0.01,cross:0.95" ]; then
  echo "the winner is round 20's configuration, shipped already: nothing ships" | tee -a "$out/decision.txt"
  exit 0
fi
# 4. The winner with every module of the 66 as examples, and its cost.
if [ ! -s "$out/winner.policy" ]; then
  /usr/bin/python3 bench/choice-guard.py "$base" "$v19/fresh.data.tsv" --columns "$columns" --train "$data" \
    --only "all,$k,$margin,$novelty,0" --vote "$vote" --write-policy "$out/winner.json" >/dev/null
  "$eval" rewrite-policy "$out/winner.json" -o "$out/winner.policy" --blobs >/dev/null
fi
# 4-5. Its cost; then, if it ships, test after the choice.
ship_after_lua_and_test "$shipped" "$shipped_small" || exit 0
