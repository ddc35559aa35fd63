#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# c-ares 1.18.1 (Debian's upstream tarball, C): every object of the static
# asynchronous DNS resolver library; no tools or tests.
set -euo pipefail
RECIPE_NAME=c-ares
RECIPE_SUMMARY="c-ares 1.18.1 from 'apt-get source c-ares' (C): the static library's objects."
RECIPE_EXPECTED=59
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source c-ares "c-ares_1.18.1.orig.tar.gz" # not its .asc
}

recipe_build() {
  log "cmake (static library only, no tools or tests)"
  cmake_configure -DCARES_STATIC=ON -DCARES_SHARED=OFF -DCARES_BUILD_TOOLS=OFF \
    -DCARES_BUILD_TESTS=OFF -DCARES_INSTALL=OFF
  log "make"
  run_make -C _b -j"$JOBS"
}

run_recipe "$@"
