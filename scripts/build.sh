#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh), configures and builds mlgo-es in
# ./build (or $MLGO_BUILD_DIR). Incremental and ccache-backed: cheap to re-run.
#   scripts/build.sh             everything (tools, tests, benchmarks)
#   scripts/build.sh TARGET…     only those targets and what they need
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${MLGO_BUILD_DIR:-build}

bash scripts/setup.sh
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
# Two cores, and LLVM-heavy translation units take ~1.5 GB each: -j2 is safe.
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$BUILD_DIR" -j "${MLGO_JOBS:-2}" "${targets[@]}"
