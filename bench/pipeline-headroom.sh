#!/bin/bash
# Pipeline headroom runs, one after the other; a finished step is not redone.
cd /work/main
out=build/pipeline-headroom
step() { # name args...
  local name=$1; shift
  [ -s "$out/$name.md" ] && return 0
  build/apps/mlgo-eval pipeline-search "$@" --markdown "$out/$name.md.part" --values "$out/$name.tsv" >"$out/$name.log" 2>&1
  mv "$out/$name.md.part" "$out/$name.md"
}
step validation-structured-text --split configs/inlining-split.toml --set validation
step test-structured-text --split configs/inlining-split.toml --set test
step validation-sequence-text --split configs/inlining-split.toml --set validation --space sequence
step validation-structured-ir --split configs/inlining-split.toml --set validation --measure ir-instructions
step test-sequence-text --split configs/inlining-split.toml --set test --space sequence
step test-structured-ir --split configs/inlining-split.toml --set test --measure ir-instructions
echo done >"$out/ALL-DONE"
