#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Snappy 1.1.9 (Debian's upstream tarball, C++): every object of the static
# compression library.
set -euo pipefail
RECIPE_NAME=snappy
RECIPE_SUMMARY="Snappy 1.1.9 from 'apt-get source snappy' (C++): the static library's objects."
RECIPE_EXPECTED=4
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source snappy "snappy_1.1.9.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests or benchmarks)"
  cmake_configure -DSNAPPY_BUILD_TESTS=OFF -DSNAPPY_BUILD_BENCHMARKS=OFF -DSNAPPY_INSTALL=OFF
  log "make snappy"
  run_make -C _b -j"$JOBS" snappy
}

run_recipe "$@"
