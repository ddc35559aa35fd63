#!/usr/bin/env bash
# bench/pipeline-headroom.sh [OUT [STEP…]]
#
# The pass-pipeline task's per-module search headroom on the validation and
# test code bases of configs/inlining-split.toml: the structured and the
# sequence space, each in .text bytes and in IR instructions (CompilerGym's
# measure). One run after the other (2 cores: never two at
# once); a finished step (its OUT/NAME.md exists) is not run again, so the
# script resumes after an interruption. Needs the split's corpora built
# (corpus/recipes/NAME.sh) and the tools (scripts/build.sh). STEPs (names
# below, e.g. test-structured-ir) run only those.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-headroom}"
only=("${@:2}")
mkdir -p "$out"
split=configs/inlining-split.toml
step() { # NAME ARGS...: one search, its table in NAME.md and modules in NAME.tsv
  local name=$1
  shift
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then return 0; fi
  [ -s "$out/$name.md" ] && { echo "$name: done before"; return 0; }
  echo "$name: mlgo-eval pipeline-search $*"
  "$build/apps/mlgo-eval" pipeline-search "$@" --markdown "$out/$name.md.part" \
    --values "$out/$name.tsv" >"$out/$name.log" 2>&1
  mv "$out/$name.md.part" "$out/$name.md"
}
step validation-structured-text --split "$split" --set validation
step test-structured-text --split "$split" --set test
step validation-sequence-text --split "$split" --set validation --space sequence
step validation-structured-ir --split "$split" --set validation --measure ir-instructions
step test-sequence-text --split "$split" --set test --space sequence
step test-structured-ir --split "$split" --set test --measure ir-instructions
step validation-sequence-ir --split "$split" --set validation --space sequence \
  --measure ir-instructions
step test-sequence-ir --split "$split" --set test --space sequence --measure ir-instructions
echo "tables in $out/*.md"
