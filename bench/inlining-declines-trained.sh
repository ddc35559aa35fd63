#!/usr/bin/env bash
# bench/inlining-declines-trained.sh [OUT [SECONDS]]
#
# Issue 33's third one-way round: a policy *trained* on declines. The first
# two rounds (bench/inlining-direction.sh, bench/inlining-decline-margins.sh)
# restricted policies trained on flips both ways; when this round was
# written they were read with the directions swapped (--keep 1 was taken
# for declines only; it is inlines only), so its premise, that declines
# carry the gains, was a misreading, and its first run deployed the
# declines-trained policies with --keep 1, inlining only, against the
# rule's intent (validation +6 % to +48 %). --keep 0 (declines only, as
# written below) since 2026-12-07 05:20. Here the labels
# themselves are declines only: the greedy search from -Oz on the 4,069
# training modules tries only calls -Oz inlines (mlgo-eval search
# --flips-from 1, random order, SECONDS of budget, default 1500), and BC
# imitates its tried decisions weighted by the bytes each saved or cost
# (bc-train --imitate-actions --outcome-weights, configs/inlining-bc.toml,
# 30 epochs, seed 1, the epoch with the best held-out agreement), as
# scripts/train-inlining's tried-* candidates are made.
#
# Candidates: residual margins 0.1, 0.3 and 1, each with --keep 0 (the
# policy may only decline, as it was trained to).
# Validation: the 16 code bases of the first two rounds.
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
# kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-declines-trained}"
seconds="${2:-1500}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # one_way_round
sed -n '/^# The rule/,/^#      for the winner/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
# The search (only calls -Oz inlines), BC of its tried decisions, the
# policies one way only, the choice, then test and the ten for the winner.
one_way_round 1 0 declines
