#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Expat 2.5.0 (Debian's upstream tarball, a snapshot of the libexpat
# repository): the static library's objects and the xmlwf tool's, built with
# CMake as the project's own expat/CMakeLists.txt does.
set -euo pipefail
RECIPE_NAME=expat
RECIPE_SUMMARY="Expat 2.5.0 from 'apt-get source expat': libexpat (static) and xmlwf."
RECIPE_EXPECTED=7
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source expat "expat_2.5.0*.orig.tar.*"
}

recipe_build() {
  # The tarball is the repository: the library is in expat/.
  cd expat
  log "cmake (static library and xmlwf; no tests, examples or docs)"
  cmake_configure -DEXPAT_SHARED_LIBS=OFF -DEXPAT_BUILD_TOOLS=ON -DEXPAT_BUILD_EXAMPLES=OFF \
    -DEXPAT_BUILD_TESTS=OFF -DEXPAT_BUILD_DOCS=OFF -DEXPAT_BUILD_FUZZERS=OFF
  log "make expat xmlwf"
  run_make -C _b -j"$JOBS" expat xmlwf
}

run_recipe "$@"
