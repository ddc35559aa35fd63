#!/usr/bin/env bash
# The README's first command: set up, build, build the small real demo corpora
# (zlib and Lua, merged) and run the main job on them.
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
"$BIN/mlgo-corpus" merge "$MLGO_BUILD_DIR/corpora/zlib/corpus" "$MLGO_BUILD_DIR/corpora/lua/corpus" -o "$DEMO"
echo "== corpus summary"
"$BIN/mlgo-corpus" info "$DEMO"
echo "== modules the default sampler (bucket round robin by size) draws for the first 3 steps"
"$BIN/mlgo-corpus" sample "$DEMO" --steps 3 -k 6 --seed 1
echo "== how one module is recompiled"
"$BIN/mlgo-corpus" command "$DEMO" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["modules"][0])' "$DEMO/corpus_description.json")" --object /tmp/mlgo-demo.o
