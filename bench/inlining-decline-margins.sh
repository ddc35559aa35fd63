#!/usr/bin/env bash
# bench/inlining-decline-margins.sh [OUT [DIRECTION_OUT]]
#
# The second round of issue 33's one-way policies. In the first
# (bench/inlining-direction.sh) policies that may only inline more
# (--keep 1; this header first called them declines-only, swapped) made
# fewer validation modules larger than the two-way ones
# (26 and 25 against 67 and 64 of 496) at the same or a better total, and
# declining only (--keep 0) was a net loss; every candidate still had 4 to
# 8 of the 16 validation code bases above -Oz. Here the --keep 1 (inlines
# only) policies are made more confident: the residual margin (the logit
# difference a flip needs) from 0.3, as shipped, to 0.5, 1, 2 and 4. (The
# script's name and its first header said "declines"; the policies it
# judges are the --keep 1 ones, which inline more.)
#
# Candidates: inlining-oz and inlining-oz-small, --keep 1, margins 0.5, 1,
# 2, 4 (8 policies); the first round's two declines-only policies (margin
# 0.3) are read from DIRECTION_OUT. Validation: the first round's 16 code
# bases.
#
# The rule, written before any figure of this round was computed (the
# script copies it to RULE.txt):
#   1. on the 16 validation code bases, alone: the fewest code bases above
#      -Oz, then the smallest total, among the 10;
#   2. the winner ships as inlining-oz (the shipped one becomes
#      inlining-oz-v2) only if it has no validation code base above -Oz
#      and a total below -Oz;
#   3. test (the split's six) and the ten fresh code bases are computed
#      for the winner after the choice, never to choose.
# Resumable: every finished report is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-decline-margins}"
first="${2:-$build/inlining-direction}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # inliner_sets, rank_inliners, decide_inliner, total, above, inlining_report
sed -n '/^# The rule/,/^#      for the winner/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
inliner_sets
[ -s "$first/inlining-oz-keep1.validation.md" ] && [ -s "$first/inlining-oz-small-keep1.validation.md" ] ||
  bench/inlining-direction.sh "$first"

candidates=()
for base in inlining-oz inlining-oz-small; do
  cp "$first/$base-keep1.json" "$first/$base-keep1.validation.md" "$out/"
  candidates+=("$base-keep1")
  for margin in 0.5 1 2 4; do
    name="$base-keep1-m$margin"
    [ -s "$out/$name.json" ] ||
      "$eval" margin "$base" --keep 1 --margin "$margin" -o "$out/$name.json" >/dev/null
    candidates+=("$name")
  done
done

rank_inliners "${candidates[@]}"
decide_inliner
