#!/usr/bin/env bash
# pipeline-guard-cost.sh [OUT]
#
# What the pipeline policies' guard costs and gives: the two shipped
# choices of both tasks behind mlgo-cc --mlgo-best-of,
#   - pipeline-inlining-oz-best-of (no novelty guard: every module may take
#     another pipeline or the inliner policy), and
#   - pipeline-inlining-oz-v5 (round 15's pipeline-inlining-oz; the novelty guard sends modules unlike the
#     training code to -Oz, whose compile then needs no second one),
# in bytes (mlgo-eval report --best-of on the ten fresh code bases of
# pipeline round 15 and on the split's test set: each module the smaller of
# the policy's and -Oz's) and in build CPU (whole builds of Lua and FLAC
# from source, MLGO_BEST_OF=1, 3 paired runs against plain -Oz). Resumes:
# a finished report or timing is kept. ~35 minutes on 2 cores.
# OUT: default $MLGO_BUILD_DIR/pipeline-guard-cost (build/…).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-guard-cost}"
eval="$build/apps/mlgo-eval"
fresh=(mbedtls libuv1 brotli jansson giflib libogg re2 muparser gflags pugixml)
mkdir -p "$out"
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
ensure_corpora "${fresh[@]}" pcre2 libwebp flac json-c leveldb zeromq lua

for policy in pipeline-inlining-oz-v5 pipeline-inlining-oz-best-of; do
  report_on "$policy" "$policy" fresh "${fresh[@]}" --best-of
  report_on "$policy" "$policy" test --split configs/inlining-split.toml \
    --set test --best-of
done
for recipe in lua flac; do
  for policy in pipeline-inlining-oz-v5 pipeline-inlining-oz-best-of; do
    timing="$out/build.$recipe.$policy.txt"
    [ -s "$timing" ] && grep -q "A/B cpu median" "$timing" && continue
    bench/paired-time.sh 3 \
      "MLGO_BEST_OF=1 bash bench/deploy/build-once.sh $recipe $out/b-$recipe-a $policy" \
      "bash bench/deploy/build-once.sh $recipe $out/b-$recipe-b" >"$timing.part" 2>&1
    mv "$timing.part" "$timing"
  done
done
rm -rf "$out"/b-*
for policy in pipeline-inlining-oz-v5 pipeline-inlining-oz-best-of; do
  echo "$policy behind --mlgo-best-of: the ten $(total "$out/$policy.fresh.md") %," \
    "test $(total "$out/$policy.test.md") %;" \
    "Lua CPU $(sed -n 's/^A\/B cpu median //p' "$out/build.lua.$policy.txt")," \
    "FLAC CPU $(sed -n 's/^A\/B cpu median //p' "$out/build.flac.$policy.txt")"
done | tee "$out/summary.txt"
