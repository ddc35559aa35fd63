#!/usr/bin/env bash
# bench/pipeline-es.sh [OUT]
#
# The pass-pipeline task's blackbox optimisers on the training code of the
# program search (docs/pass-pipeline.md): sep-CMA-ES over the structured
# space from -Oz and from the greedy search's pipeline (pipeline-oz-single;
# pipeline-oz has since become a per-module choice), each
# policy then judged on the validation code bases of
# configs/inlining-split.toml. One run after the other (2 cores); each run
# resumes from its checkpoint and a finished step (its OUT/NAME.md exists)
# is not run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-es}"
mkdir -p "$out"
eval="$build/apps/mlgo-eval"
train=(bzip2 libpng lz4 expat zstd yaml-cpp zlib)
run() { # NAME ARGS...: one ES run, its steps in NAME.md, its policy NAME.json
  local name=$1
  shift
  [ -s "$out/$name.md" ] && { echo "$name: done before"; return 0; }
  echo "$name: mlgo-eval pipeline-search --program ${train[*]} --program-search es $*"
  "$eval" pipeline-search --program "${train[@]}" --program-search es \
    --checkpoint "$out/$name.ckpt" -o "$out/$name.json" --markdown "$out/$name.md.part" "$@" \
    >>"$out/$name.log" 2>&1
  mv "$out/$name.md.part" "$out/$name.md"
}
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
run cma-oz --steps 8 --seed 1
judge cma-oz validation
run cma-from-greedy --steps 4 --seed 1 --start pipeline-oz-single
judge cma-from-greedy validation
echo "tables in $out/*.md"
