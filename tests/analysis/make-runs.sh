#!/usr/bin/env bash
# The analysis tests' fixture: two tiny real es-train runs on the zlib corpus.
#   a.h5  2 steps, no validation corpus (sizes only from the training candidates)
#   b.h5  3 steps, validated on zlib after every step (exact sizes of its policies)
# Usage: make-runs.sh ES_TRAIN OUTPUT_DIR   (MLGO_CORPORA_DIR: where corpora live)
set -euo pipefail
es_train=$1
out=$2
zlib=${MLGO_CORPORA_DIR:?}/zlib/corpus
rm -rf "$out"
mkdir -p "$out"
# Random starts (--residual-margin 0): runs that move, for the analyses to tell apart.
tiny=(--directions 2 --modules-per-step 2 --hidden 4 --vocabulary-quantiles 20 --workers 2
      --residual-margin 0)
"$es_train" --corpus "$zlib" --steps 2 --learning-rate 0.01 "${tiny[@]}" -o "$out/a.h5"
"$es_train" --corpus "$zlib" --steps 3 --learning-rate 0.05 "${tiny[@]}" \
  --validation-corpus "$zlib" --validation-interval 1 -o "$out/b.h5"
