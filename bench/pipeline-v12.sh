#!/usr/bin/env bash
# bench/pipeline-v12.sh [OUT]
#
# The pass-pipeline task's twelfth round: a third set of code bases no
# round has seen, to settle round 11. There the written validation rule
# chose the cost vote with margin 0.01 (build/pipeline-v11/margin-0.01.json,
# validation −3.184 %, 24 modules larger against the shipped policy's 28),
# and the shipped pipeline-inlining-oz was kept because three of twelve
# code bases outside training and validation were above -Oz under it.
# Named here, with the rule, before any recipe of them was written:
#   - C: Brotli 1.0.9 (compression), libsodium 1.0.18 (cryptography),
#     Speex 1.2.1 (a speech codec);
#   - C++: RE2 2022-06-01 (regular expressions), {fmt} 9.1.0
#     (formatting), TinyXML-2 9.0.0 (an XML parser).
# (A recipe that does not build with clang-22 is replaced by the next
# buildable one of the same language from the issue's list, and the swap
# is written here before anything is measured.) Swapped before any
# measurement: Brotli (its Debian source could not be downloaded from the
# mirror) by jq 1.6, the next C code base of the issue's list; RE2 (the
# Debian tarball drops generated sources, perl_groups.cc and the Unicode
# tables, which need a download to make) by JsonCpp 1.9.5, the next C++.
# The rule: margin-0.01 replaces the shipped pipeline-inlining-oz if, on
# these six, no code base is above -Oz under it and its total is smaller
# than the shipped policy's; otherwise the shipped policy stays. For the
# record only: the shipped inlining-oz alone (the inlining task) on them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v12}"
v11="${MLGO_V11_DIR:-build/pipeline-v11}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
fresh=(jq libsodium speex jsoncpp fmtlib tinyxml2)
ensure_corpora "${fresh[@]}"
report_on shipped "$shipped_policy" fresh "${fresh[@]}"
report_on margin-0.01 "$v11/margin-0.01.json" fresh "${fresh[@]}"
[ -s "$out/inlining-oz.fresh.md" ] ||
  "$eval" report inlining-oz "${fresh[@]}" --markdown "$out/inlining-oz.fresh.md" >"$out/inlining-oz.fresh.log" 2>&1
decide_unseen fresh margin-0.01
