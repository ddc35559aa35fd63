#!/usr/bin/env bash
# bench/inlining-declines-dagger.sh [OUT [SECONDS]]
#
# Issue 33's fifth one-way round: DAgger from the third round's winner
# (bench/inlining-declines-trained.sh: declines-0.3-keep0, the most precise
# inliner policy so far: 2 of 496 validation modules larger, validation
# -0.146 %, libyaml +0.238 % above). The declines-only search on the 4,069
# training modules starts from that policy's decisions (mlgo-eval search
# --start-policy … --flips-from 1, random order, SECONDS of budget, default
# 1500 as in round 3), so its labels are at the states the policy reaches;
# BC learns from round 3's tried decisions and these together
# (bc-train --imitate-actions --outcome-weights, configs/inlining-bc.toml,
# 30 epochs, seed 1, the epoch with the best held-out agreement). Both
# traces come from declines-only searches, so bc-train writes the policy
# declines only itself (kept 0); --keep 0 is given as well.
#
# Candidates: residual margins 0.1, 0.3 and 1, each declines only.
# Validation: the 16 code bases of the earlier rounds.
#
# The rule, written before any figure of this round was computed (the
# script copies it to RULE.txt):
#   1. on the 16 validation code bases, alone: the fewest code bases above
#      -Oz, then the smallest total;
#   2. the winner ships as inlining-oz (the shipped one becomes
#      inlining-oz-v2) only if it has no validation code base above -Oz
#      and a total below -Oz;
#   3. test (the split's six) and the ten fresh code bases are computed
#      for the winner after the choice, never to choose.
# Resumable: the search continues from its checkpoint; finished steps are
# kept. Needs round 3's files (ROUND3, default $build/inlining-declines-trained).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-declines-dagger}"
seconds="${2:-1500}"
round3="${ROUND3:-$build/inlining-declines-trained}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # one_way_round
sed -n '/^# The rule/,/^#      for the winner/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
if [ ! -s "$round3/declines-0.3-keep0.json" ] || [ ! -s "$round3/declines.tried.h5" ]; then
  echo "inlining-declines-dagger: run bench/inlining-declines-trained.sh first ($round3)" >&2
  exit 1
fi
# The search from round 3's winner (only calls it inlines), BC of both
# rounds' tried decisions, the policies declines only, the choice.
one_way_start="$round3/declines-0.3-keep0.json"
one_way_traces=("$round3/declines.tried.h5")
one_way_round 1 0 dagger
