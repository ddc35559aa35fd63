#!/usr/bin/env bash
# The README's first command: set up, build, build the small real demo corpora
# (zlib and Lua), show what the tools see, and run the main jobs: a short
# es-train run on Lua, validated on zlib; the inlining pipeline's short mode;
# the shipped policy on zlib, Lua and libpng (which it never saw).
set -euo pipefail
cd "$(dirname "$0")/.."
export MLGO_BUILD_DIR=$(realpath -m "${MLGO_BUILD_DIR:-build}")
BIN="$MLGO_BUILD_DIR/apps"

bash scripts/build.sh
export MLGO_CORPUS="$BIN/mlgo-corpus"
bash corpus/recipes/zlib.sh
bash corpus/recipes/lua.sh

DEMO="$MLGO_BUILD_DIR/corpora/demo"
echo "== merging zlib and Lua into $DEMO"
rm -rf "$DEMO" # merge writes only into a new or empty directory
"$BIN/mlgo-corpus" merge "$MLGO_BUILD_DIR/corpora/zlib/corpus" "$MLGO_BUILD_DIR/corpora/lua/corpus" -o "$DEMO"
echo "== corpus summary"
"$BIN/mlgo-corpus" info "$DEMO"
echo "== modules the default sampler (bucket round robin by size) draws for the first 3 steps"
"$BIN/mlgo-corpus" sample "$DEMO" --steps 3 -k 6 --seed 1

OUT="$MLGO_BUILD_DIR/demo"
mkdir -p "$OUT"
echo "== the heuristic's own decisions, recorded (reproduces -Oz exactly)"
"$BIN/mlgo-eval" run heuristic "$DEMO" --trace "$OUT/heuristic-trace.h5" --no-per-module
echo "== never / always inlining against -Oz"
"$BIN/mlgo-eval" run never "$DEMO" --no-per-module
"$BIN/mlgo-eval" run always "$DEMO" --no-per-module
echo "== a quantile vocabulary from the trace, and a random MLP policy over it"
"$BIN/mlgo-eval" vocab "$OUT/heuristic-trace.h5" -o "$OUT/vocab"
"$BIN/mlgo-eval" init-mlp --trace "$OUT/heuristic-trace.h5" --vocab "$OUT/vocab" -o "$OUT/mlp-init.json"
"$BIN/mlgo-eval" run "$OUT/mlp-init.json" "$DEMO" --no-per-module

echo "== es-train: a short evolution-strategies run on Lua, validated on zlib (configs/demo-es.toml)"
"$BIN/es-train" --config configs/demo-es.toml \
  --corpus "$MLGO_BUILD_DIR/corpora/lua/corpus" \
  --validation-corpus "$MLGO_BUILD_DIR/corpora/zlib/corpus" --validation-interval 5 \
  -o "$OUT/es-demo.h5" --overwrite
echo "== the run file (HDF5): $OUT/es-demo.h5, summarised by mlgo-results"
"$BIN/mlgo-results" summary "$OUT/es-demo.h5"
echo "== the inlining pipeline, short: search on zlib, clone the searched decisions, choose on Lua (scripts/train-inlining)"
scripts/train-inlining --short --best-of --out "$OUT/train-inlining"
# libpng is one of the split's test code bases: small (17 modules, ~30 s to
# build) and never trained or chosen on, so the demo ends on unseen code.
bash corpus/recipes/libpng.sh
echo "== the shipped policy (configs/policies/inlining-oz.json, trained on the split's training code"
echo "   bases), each object the smaller of policy and -Oz (mlgo-cc --mlgo-best-of):"
echo "   zlib and libpng were never trained or chosen on; Lua chose it (validation)"
"$BIN/mlgo-eval" report inlining-oz zlib libpng lua --best-of --corpora-dir "$MLGO_BUILD_DIR/corpora"
