#!/usr/bin/env bash
# bench/pipeline-v22.sh [OUT]
#
# The pass-pipeline task's twenty-second round: the inliner policy in the
# choice at a price. On unseen code the inliner policy is what costs the
# combined choices their bytes (docs/pass-pipeline.md, the fifth set:
# pipeline-oz, the pipelines with LLVM's inliner, -1.294 % with none above;
# round 21's combined choice -0.781 %). On the 42 of the 66 code bases it
# did not train on, -Oz with the inliner policy is -0.37 % with 128
# modules larger and 150 smaller; on the 24 it trained on, -0.58 %.
# Rounds 20 and 21 scored their candidates on all 66, where for those 24
# the alternatives that carry the inliner policy are measured on its own
# training code. This round:
#   - gives the alternatives that carry the inliner policy a price: their
#     vote counts an extra margin worse (bench/choice-loco.py
#     --inliner-margins; 'inf' never picks them, a choice among the
#     pipelines with LLVM's inliner);
#   - scores every candidate only on the 42 code bases the inliner policy
#     did not train on (the split's 24 training code bases are still left
#     out in turn and still examples for the others; --score-without).
#
# The rule, written before this script's first run (the script copies it
# to RULE.txt):
#   1. examples: every module of the 66 code bases outside test (round
#      20's build/pipeline-v20/all.data.tsv); alternatives the shipped four
#      (pool columns 0,4,1,5: -Oz; the wide pipeline with the inliner
#      policy; the same with LLVM's; the second pipeline with the inliner
#      policy);
#   2. candidates: votes mean, median, bases, one-per-base, ucb:0.25,
#      ucb:0.5; k 10, 20, 40; margin 0, 0.005, 0.01, 0.02; novelty off,
#      0.8, cross:0.5, cross:0.8, cross:0.95; inliner margin 0, 0.005,
#      0.01, 0.02, inf (1,800), each scored by leaving every code base out
#      in turn, the score over the 42 code bases outside the split's
#      training set;
#   3. the fewest of the 42 above -Oz, then the smallest total over them;
#   4. the winner, its examples every module of the 66, ships as
#      pipeline-inlining-oz (the shipped one becomes -v9), and with the
#      distilled inliner as pipeline-inlining-oz-small (the shipped one
#      becomes -small-v4), unless it is round 21's configuration (median,
#      k 40, margin 0.02, cross:0.8, inliner margin 0), its inliner margin
#      is inf (a choice without the inliner policy is no combined policy:
#      it is written and read on test for the record only), or a Lua build
#      with it costs more than 1.10x the CPU of one with the shipped policy
#      (3 paired runs, median ratio); an inliner margin other than 0 is
#      built into the tool (PipelineChoice) before it is written;
#   5. test, and a sixth unseen set (built this session by no round), are
#      read after the choice, never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v22}"
v19="${MLGO_V19_DIR:-$build/pipeline-v19}"
v20="${MLGO_V20_DIR:-$build/pipeline-v20}"
eval="$build/apps/mlgo-eval"
base=configs/policies/pipeline-inlining-oz-v5.json # the file round 17's examples were written into
shipped=configs/policies/pipeline-inlining-oz-v9.policy             # round 21's, shipped then
shipped_small=configs/policies/pipeline-inlining-oz-small-v4.policy # round 21's, shipped then
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   5\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
data="$v20/all.data.tsv"
[ -s "$data" ] || { echo "missing $data: run bench/pipeline-v20.sh first" >&2; exit 1; }
# 1-3. The grid, each code base left out in turn (about a quarter of an hour).
priced_grid "$data" 42
# Round 21's configuration under this round's score, for comparison.
echo "round 21's configuration under the same score:" \
  "$(grep -E '^\| median \| 40 \| 0.02 \| cross:0.8 \| 0 \|' "$out/grid.txt" | head -1)" | tee -a "$out/decision.txt"
if [ "$vote,$k,$margin,$novelty,$extra" = "median,40,0.02,cross:0.8,0" ]; then
  echo "the winner is round 21's configuration, shipped already: nothing ships" | tee -a "$out/decision.txt"
  exit 0
fi
# 4. The winner with every module of the 66 as examples.
priced_winner "$data" || exit 0
# 4-5. Its cost; then, if it ships, test after the choice.
ship_after_lua_and_test "$shipped" "$shipped_small" || exit 0
