#!/usr/bin/env bash
# bench/inlining-gate.sh [OUT]
#
# Issue 33's "safe alone", by a module-level gate: the inliner policy
# (inlining-oz) runs in a module only where the module's nearest examples
# say it pays; elsewhere LLVM's heuristic inlines. The pipeline is -Oz's in
# both alternatives, so this is the inliner alone, with the pass-pipeline
# task's choice (PipelineChoice: "heuristic_inliner") as its gate. Earlier
# gates were judged on a few validation code bases ("A module-level guard",
# docs/inlining-results.md: libwebp and FLAC above); this one is scored
# as rounds 20 and 21 of the pipeline task: each of the 66 code bases
# outside test left out in turn (bench/choice-loco.py --columns 0,3).
#
# Disclosure: the grid below, with two more votes the tool does not have
# (ucb:0.5, bases), was first run as an exploration on 2026-12-07 before
# this rule was written; the rule is rounds 20 and 21's, restricted to the
# votes PipelineChoice has.
#
# The rule (the script copies it to RULE.txt):
#   1. examples: every module of the 66 code bases outside test (round
#      20's build/pipeline-v20/all.data.tsv); alternatives -Oz with LLVM's
#      inliner (pool column 0) and -Oz with inlining-oz (column 3);
#   2. candidates: votes mean, median; k 10, 20, 40; margin 0, 0.005,
#      0.01, 0.02; novelty off, 0.8, cross:0.5, cross:0.8, cross:0.95
#      (120), each scored by leaving every code base out in turn;
#   3. the fewest held-out code bases above -Oz, then the smallest total;
#   4. the winner, its examples every module of the 66, ships as
#      inlining-oz-gated (and with the distilled inliner as
#      inlining-oz-small-gated) only if no held-out code base is above
#      -Oz; nothing shipped is replaced; the build CPU of Lua and FLAC
#      against plain -Oz is measured (3 pairs each), not a condition;
#   5. test, and the fourth unseen set, are computed after the choice,
#      never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-gate}"
v20="${MLGO_V20_DIR:-$build/pipeline-v20}"
eval="$build/apps/mlgo-eval"
base=configs/policies/pipeline-inlining-oz-v5.json # its inliner is inlining-oz's network
small=configs/policies/pipeline-inlining-oz-small.policy # its inliner is inlining-oz-small's network
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   5\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
data="$v20/all.data.tsv"
[ -s "$data" ] || { echo "missing $data: run bench/pipeline-v20.sh first" >&2; exit 1; }
# 1-3. The grid, each code base left out in turn (minutes).
[ -s "$out/grid.txt" ] || {
  /usr/bin/python3 bench/choice-loco.py "$data" --columns 0,3 --votes mean,median \
    --rule "$out/winner.txt" >"$out/grid.txt.part"
  mv "$out/grid.txt.part" "$out/grid.txt"
}
field() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p; s/^$1=\\([^ ]*\\).*/\\1/p" "$out/winner.txt" | head -1; }
k=$(field k) margin=$(field margin) novelty=$(field novelty) vote=$(field vote)
ltotal=$(field total) labove=$(field above)
echo "winner: vote $vote, k $k, margin $margin, novelty $novelty:" \
  "leaving each of 66 code bases out $ltotal %, $labove above -Oz" | tee "$out/decision.txt"
if [ "$labove" != 0 ]; then
  echo "a held-out code base is above -Oz: nothing ships" | tee -a "$out/decision.txt"
  exit 0
fi
# 4. The gate: -Oz's pipeline twice, LLVM's inliner in the first.
[ -s "$out/base.json" ] || /usr/bin/python3 - "$base" "$out/base.json" <<'PY'
import json, sys
sys.path.insert(0, "bench")
import policy_file
policy = policy_file.load(sys.argv[1])
choice = policy["choice"]
choice["pipelines"] = [{}, {}]
choice["heuristic_inliner"] = [0]
policy["description"] = "inlining-oz gated per module (-Oz's pipeline, LLVM's inliner or the policy's)"
json.dump(policy, open(sys.argv[2], "w"), indent=1)
PY
if [ ! -s "$out/gated.policy" ]; then
  /usr/bin/python3 bench/choice-guard.py "$out/base.json" "$data" --columns 0,3 --train "$data" \
    --only "all,$k,$margin,$novelty,0" --vote "$vote" --write-policy "$out/gated.json" >/dev/null
  "$eval" rewrite-policy "$out/gated.json" -o "$out/gated.policy" --blobs >/dev/null
fi
# 5. Test, after the choice (and the gate with the distilled network).
small_and_test gated "$small"
for recipe in lua flac; do
  for name in gated gated-small; do
    [ -s "$out/build.$recipe.$name.txt" ] && continue
    bench/paired-time.sh 3 "bash bench/deploy/build-once.sh $recipe /tmp/gate-a $(realpath "$out/$name.policy")" \
      "bash bench/deploy/build-once.sh $recipe /tmp/gate-b" >"$out/build.$recipe.$name.txt.part"
    mv "$out/build.$recipe.$name.txt.part" "$out/build.$recipe.$name.txt"
  done
done
