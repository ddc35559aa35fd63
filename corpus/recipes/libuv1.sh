#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libuv 1.44.2 (Debian's upstream tarball, C): every object of the static
# asynchronous I/O library (event loop, the Unix and Linux back ends, thread
# pool, file system, TCP, UDP, pipes, processes); no tests or benchmarks.
set -euo pipefail
RECIPE_NAME=libuv1
RECIPE_SUMMARY="libuv 1.44.2 from 'apt-get source libuv1' (C): the static library's objects."
RECIPE_EXPECTED=37
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libuv1 "libuv1_1.44.2.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests or benchmarks)"
  cmake_configure -DLIBUV_BUILD_TESTS=OFF -DLIBUV_BUILD_BENCH=OFF
  log "make uv_a"
  run_make -C _b -j"$JOBS" uv_a
}

run_recipe "$@"
