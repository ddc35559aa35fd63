#!/usr/bin/env bash
# The README's test command and what CI runs: set up, build, and run the whole
# test suite (unit tests, then the recipes that build the zlib and Lua corpora
# and the integration tests on them). Corpora are cached in the build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MLGO_BUILD_DIR:-build}

bash scripts/build.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${MLGO_JOBS:-2}" "$@"
