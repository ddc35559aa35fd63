#!/usr/bin/env bash
# The README's test command and what CI runs: set up, build, and run the
# test suite (unit tests, then the recipes that build the zlib and Lua corpora
# and the integration tests on them). Corpora are cached in the build tree.
# The extended tests (the same tests on larger corpora, docs/tests.md) run
# with MLGO_TEST_EXTENDED=1.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MLGO_BUILD_DIR:-build}

bash scripts/build.sh
extended=(-LE extended)
if [[ ${MLGO_TEST_EXTENDED:-0} == 1 ]]; then
  extended=()
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${MLGO_JOBS:-2}" "${extended[@]}" "$@"
