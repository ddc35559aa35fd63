#!/usr/bin/env bash
# bench/inlining-inlines-trained.sh [OUT [SECONDS]]
#
# Issue 33's fourth one-way round, the mirror of the third
# (bench/inlining-declines-trained.sh): a policy trained on inlines only.
# The first round found the shipped policies' gains in their extra inlines
# (inlining-oz --keep 1: -0.359 % on validation, 26 of 496 modules larger;
# both ways -0.271 %, 67 larger) and the third found labels of one
# direction make a precise policy. Here the greedy search from -Oz on the
# 4,069 training modules tries only calls -Oz declines (mlgo-eval search
# --flips-from 0, random order, SECONDS of budget, default 1500, as the
# third round), and BC imitates its tried decisions weighted by the bytes
# each saved or cost (bc-train --imitate-actions --outcome-weights,
# configs/inlining-bc.toml, 30 epochs, seed 1, the epoch with the best
# held-out agreement).
#
# Candidates: residual margins 0.1, 0.3 and 1, each with --keep 1 (the
# policy may only inline more, as it was trained to).
# Validation: the 16 code bases of the first three rounds.
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
# kept. MLGO_BUILD_DIR names the build tree (binaries and corpora).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-inlines-trained}"
seconds="${2:-1500}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # one_way_round
sed -n '/^# The rule/,/^#      for the winner/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
# The search (only calls -Oz declines), BC of its tried decisions, the
# policies one way only, the choice, then test and the ten for the winner.
one_way_round 0 1 inlines
