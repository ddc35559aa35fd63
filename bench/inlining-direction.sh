#!/usr/bin/env bash
# bench/inlining-direction.sh [OUT]
#
# Issue 33's "safe alone": does an inliner policy stay at or below -Oz on
# unseen code if it may overrule the heuristic in one direction only? The
# shipped residual policies flip both ways; on code they never saw they
# make most C code bases larger (docs/inlining-results.md), and the tried
# decisions say a wrong flip towards inlining costs more (198 bytes on
# average) than one towards declining (69). `mlgo-eval margin --keep D`
# writes the same policy with the compiler's decision D never overruled:
# --keep 1 (a call -Oz inlines stays inlined: the policy only inlines more),
# --keep 0 (a call -Oz declines stays declined: the policy only declines).
# (Until 2026-12-07 05:20 these two lines had the directions swapped; the
# rule below does not depend on them, the documentation's reading does.)
#
# Candidates: inlining-oz and inlining-oz-small (the distilled one), each
# as shipped, with --keep 1 and with --keep 0 (6 policies).
# Validation: the split's four (Lua, XZ, Box2D, Ninja) and the twelve more
# code bases outside training and test that the pipeline task validates on
# (libyaml, LZO, libjpeg-turbo, Hunspell, Snappy, double-conversion, jq,
# libsodium, Speex, JsonCpp, {fmt}, TinyXML-2): 16 code bases, 496 modules.
#
# The rule, written before any figure of this round was computed (the
# script copies it to RULE.txt):
#   1. on the 16 validation code bases, alone (no --mlgo-best-of): the
#      fewest code bases above -Oz, then the smallest total;
#   2. the winner ships as inlining-oz (the shipped one becomes
#      inlining-oz-v2) only if it has no validation code base above -Oz,
#      a total below -Oz and is not one of the shipped files as they are;
#   3. test (the split's six) is computed for every candidate after the
#      choice, and the ten fresh code bases of round 15 for the record;
#      neither is read by the choice.
# Resumable: every finished report is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-direction}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # inliner_sets, rank_inliners, total, above, ensure_corpora, inlining_report
sed -n '/^# The rule/,/^#      neither/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
inliner_sets
ensure_corpora "${validation[@]}" "${test[@]}" "${fresh[@]}"

candidates=()
for base in inlining-oz inlining-oz-small; do
  cp "configs/policies/$base.json" "$out/$base.json"
  candidates+=("$base")
  for keep in 1 0; do
    name="$base-keep$keep"
    [ -s "$out/$name.json" ] || "$eval" margin "$base" --keep "$keep" -o "$out/$name.json" >/dev/null
    candidates+=("$name")
  done
done

# 1. Validation, and the choice.
rank_inliners "${candidates[@]}"
{
  echo "winner: $winner: validation $wtotal %, $wabove code bases above -Oz"
  if [ "$wabove" = 0 ] && awk -v t="$wtotal" 'BEGIN {exit !(t < 0)}' && [[ "$winner" == *-keep* ]]; then
    echo "decision: $winner ships as inlining-oz"
  else
    echo "decision: nothing ships"
  fi
} | tee "$out/decision.txt"

# 2. After the choice: test and the fresh ten, for every candidate.
for name in "${candidates[@]}"; do
  inlining_report "$name" test "${test[@]}"
  inlining_report "$name" fresh "${fresh[@]}"
  printf '%s: validation %s %% (%s above); test %s %% (%s above); fresh %s %% (%s above)\n' "$name" \
    "$(total "$out/$name.validation.md")" "$(above "$out/$name.validation.md")" \
    "$(total "$out/$name.test.md")" "$(above "$out/$name.test.md")" \
    "$(total "$out/$name.fresh.md")" "$(above "$out/$name.fresh.md")"
done | tee "$out/record.txt"
