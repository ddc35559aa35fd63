#!/usr/bin/env bash
# bench/pipeline-v17.sh [OUT]
#
# The pass-pipeline task's seventeenth round: every training module as an
# example, now that a compile can afford to read them. Round 14 found a
# choice with all 4,069 training modules as examples the best on its
# sixteen validation code bases (-2.081 % against -1.882 %), but a build
# read them as 2.4 MB of base64 JSON in every compile (Lua 1.22x the
# shipped policy's CPU), so it did not ship. Policy files now have a blob
# form (version 4: a JSON head, then the doubles raw), which a compile
# reads without parsing them. Round 15 chose on the 26 validation code
# bases with the shipped 613 examples only.
#
# Said before the rule: while checking whether the file format was worth
# building, this session scored part of this grid on the 26 code bases
# (every example; k 10 and 20; margins 0 to 0.03; novelty off, cross:0.8,
# cross:0.95). The rule below is rounds 13-15's, unchanged, so what was
# seen could not shape it; test was not read.
#
# The rule, written before this script's first run (the script copies it
# to RULE.txt):
#   1. candidates: round 15's grid (k 10, 20, 40; margin 0, 0.005, 0.01,
#      0.02; novelty off, 0.8, cross:0.5, cross:0.8, cross:0.95; agreement
#      0) with the shipped 613 examples and with every training module's
#      (4,069): 120 candidates, scored outside the tool on the 26
#      validation code bases together (round 15's);
#   2. the fewest code bases above -Oz, then the smallest total;
#   3. a winner with every training module as examples is written in the
#      blob form and ships only if a Lua build with it costs at most 1.10x
#      the CPU of one with the shipped pipeline-inlining-oz (round 14's
#      condition; 3 paired runs, median ratio);
#   4. the winner ships as pipeline-inlining-oz (the shipped one becomes
#      -v5) unless it is the shipped configuration;
#   5. test is computed for the winner after it is chosen, never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v17}"
v14="${MLGO_V14_DIR:-$build/pipeline-v14}"
v15="${MLGO_V15_DIR:-$build/pipeline-v15}"
eval="$build/apps/mlgo-eval"
base="${MLGO_V17_BASE:-configs/policies/pipeline-inlining-oz-v5.json}" # round 15's, shipped then
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   5\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
for f in "$v14/train.data.tsv" "$v15/validation26.data.tsv"; do
  [ -s "$f" ] || { echo "missing $f: run bench/pipeline-v14.sh and bench/pipeline-v15.sh first" >&2; exit 1; }
done

# 1-2. The grid and its winner (seconds).
guard() {
  /usr/bin/python3 bench/choice-guard.py "$base" "$v15/validation26.data.tsv" --columns 0,4,1,5 \
    --train "$v14/train.data.tsv" --examples both --neighbours 10,20,40 \
    --margins 0,0.005,0.01,0.02 --novelty 1,0.8,cross:0.5,cross:0.8,cross:0.95 --agreement 0 "$@"
}
[ -s "$out/grid.txt" ] || guard --markdown "$out/grid.md" --rule "$out/winner.txt" >"$out/grid.txt"
read -r examples k margin novelty _ agreement wtotal wabove _ < <(sed 's/[a-z_]*=//g; s/ %//' "$out/winner.txt")
echo "winner: examples $examples, k $k, margin $margin, novelty $novelty: 26 code bases $wtotal %, $wabove above -Oz" |
  tee "$out/decision.txt"
[ -s "$out/winner.json" ] ||
  guard --only "$examples,$k,$margin,$novelty,$agreement" --write-policy "$out/winner.json" >/dev/null
winner="$out/winner.json"
if [ "$examples" = all ]; then
  winner="$out/winner.policy"
  [ -s "$winner" ] || "$eval" rewrite-policy "$out/winner.json" -o "$winner" --blobs >/dev/null
  stat -c "%s %n" "$out/winner.json" "$winner" >"$out/sizes.txt"
fi

# 3. The build cost of every example: Lua with the winner against Lua with
# the shipped policy, paired.
if [ "$examples" = all ] && [ ! -s "$out/build.lua.txt" ]; then
  bench/paired-time.sh 3 "bash bench/deploy/build-once.sh lua /tmp/v17-a $(realpath "$winner")" \
    "bash bench/deploy/build-once.sh lua /tmp/v17-b $(realpath "$base")" >"$out/build.lua.txt.part"
  mv "$out/build.lua.txt.part" "$out/build.lua.txt"
fi
if [ "$examples" = all ]; then
  ratio=$(sed -n "s/^A\/B cpu median \([0-9.]*\) .*/\1/p" "$out/build.lua.txt")
  if awk -v r="$ratio" 'BEGIN {exit !(r <= 1.10)}'; then
    echo "Lua build: ${ratio}x the shipped policy's CPU (at most 1.10x): the winner ships" | tee -a "$out/decision.txt"
  else
    echo "Lua build: ${ratio}x the shipped policy's CPU (more than 1.10x): nothing ships" | tee -a "$out/decision.txt"
  fi
fi

# 5. Test, after the choice: the file that would ship, by its own compiles.
report_on winner "$winner" test --split configs/inlining-split.toml --set test
echo "winner on test: $(total "$out/winner.test.md") %, $(above "$out/winner.test.md") code bases above -Oz" |
  tee -a "$out/decision.txt"
