#!/usr/bin/env bash
# pipeline-v16.sh [OUT]
#
# Pipeline round 16: a choice for behind the guard that the guard compiles
# twice only about half of the time.
#
# Behind mlgo-cc --mlgo-best-of a module the choice sends to -Oz (the
# fallback: -Oz's pipeline, LLVM's inliner) is compiled once; any other, twice
# (docs/deployment.md). The two shipped choices take another alternative for
# most modules: the guard costs Lua about 2x plain -Oz's build CPU under both,
# FLAC 1.31x (pipeline-inlining-oz) and 1.48x (pipeline-inlining-oz-best-of)
# (bench/pipeline-guard-cost.sh). A larger margin or a stricter novelty guard
# sends more modules to -Oz: cheaper, at a loss of bytes.
#
# The rule, written before any figure below was computed:
#   1. Candidates: pipeline-inlining-oz's choice (its 613 examples, its four
#      alternatives) with k 10, 20 or 40; margin 0, 0.005, 0.01, 0.02, 0.03
#      or 0.05; novelty off, cross:0.95, cross:0.8 or cross:0.5 (round 14's
#      calibration across code bases); agreement 0. Scored behind the guard
#      (each module the smaller of its alternative and -Oz) on the 26
#      validation code bases of round 15, outside the tool
#      (bench/choice-guard.py --best-of, on the pool's compiles).
#   2. The winner: the smallest total among the candidates whose modules
#      taking another alternative than -Oz hold at most half of the
#      validation code's -Oz .text (what the guard compiles twice); ties:
#      the smaller share.
#   3. It ships as pipeline-inlining-oz-best-of-half if whole builds of Lua
#      (validation) and FLAC (test) from source behind the guard cost less
#      CPU than under pipeline-inlining-oz-best-of (2.10x and 1.48x plain
#      -Oz's, 3 paired runs each, today's figures above); else nothing ships.
#   4. For the record, after the choice: its report behind the guard on the
#      test set, and the builds' figures.
# ~25 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v16}"
eval="$build/apps/mlgo-eval"
base="${MLGO_V16_BASE:-configs/policies/pipeline-inlining-oz-v5.json}" # round 15's, shipped then
mkdir -p "$out"
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   4\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
v14="${MLGO_V14_DIR:-$build/pipeline-v14}" v15="${MLGO_V15_DIR:-$build/pipeline-v15}"
[ -s "$v14/train.data.tsv" ] || bench/pipeline-v14.sh "$v14"
[ -s "$v15/validation26.data.tsv" ] || bench/pipeline-v15.sh "$v15"

# 1-2. The grid behind the guard, and the rule's winner.
guard() {
  /usr/bin/python3 bench/choice-guard.py "$base" "$v15/validation26.data.tsv" --columns 0,4,1,5 \
    --train "$v14/train.data.tsv" --best-of --agreement 0 "$@"
}
[ -s "$out/grid.txt" ] || guard --neighbours 10,20,40 --margins 0,0.005,0.01,0.02,0.03,0.05 \
  --novelty 1,cross:0.95,cross:0.8,cross:0.5 >"$out/grid.txt"
# Rows: | examples | k | margin | novelty (limit) | agreement | total % | twice % | bytes twice % |
awk -F'|' '$2 ~ /shipped/ {gsub(/[ %]/, "", $7); gsub(/[ %]/, "", $9); split($5, n, " ");
  gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/ /, "", n[1]);
  if ($9 + 0 <= 50) print $7, $9, $3, $4, n[1]}' "$out/grid.txt" |
  sort -g -k1,1 -k2,2 | head -1 >"$out/winner.txt"
read -r total share k margin novelty <"$out/winner.txt"
echo "winner: k $k, margin $margin, novelty $novelty: behind the guard $total % on the 26," \
  "$share % of their -Oz bytes compiled twice" | tee "$out/decision.txt"
[ -s "$out/winner.json" ] ||
  guard --only "$k,$margin,$novelty,0" --write-policy "$out/winner.json" >/dev/null

# 3. The builds behind the guard against plain -Oz.
for recipe in lua flac; do
  timing="$out/build.$recipe.txt"
  [ -s "$timing" ] && grep -q "A/B cpu median" "$timing" && continue
  bench/paired-time.sh 3 \
    "MLGO_BEST_OF=1 bash bench/deploy/build-once.sh $recipe $out/b-$recipe-a $(realpath "$out/winner.json")" \
    "bash bench/deploy/build-once.sh $recipe $out/b-$recipe-b" >"$timing.part" 2>&1
  mv "$timing.part" "$timing"
done
rm -rf "$out"/b-*
ratio() { sed -n 's/^A\/B cpu median \([0-9.]*\).*/\1/p' "$out/build.$1.txt"; }
lua=$(ratio lua) flac=$(ratio flac)
if awk -v l="$lua" -v f="$flac" 'BEGIN {exit !(l < 2.0982 && f < 1.4787)}'; then
  echo "decision: ships as pipeline-inlining-oz-best-of-half (Lua ${lua}x, FLAC ${flac}x)"
else
  echo "decision: nothing ships (Lua ${lua}x, FLAC ${flac}x: not below 2.10x and 1.48x)"
fi | tee -a "$out/decision.txt"

# 4. For the record: test behind the guard.
report_on winner "$out/winner.json" test --split configs/inlining-split.toml --set test --best-of
echo "winner behind the guard: test $(total "$out/winner.test.md") %" | tee -a "$out/decision.txt"
