#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libebml 1.4.4 (Debian's upstream tarball, C++): every object of the static
# EBML (Extensible Binary Meta Language, Matroska's container) library.
set -euo pipefail
RECIPE_NAME=libebml
RECIPE_SUMMARY="libebml 1.4.4 from 'apt-get source libebml' (C++): the static library's objects."
RECIPE_EXPECTED=23
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libebml "libebml_1.4.4.orig.tar.*"
}

recipe_build() {
  log "cmake (static library)"
  cmake_configure -DDISABLE_PKGCONFIG=ON -DDISABLE_CMAKE_CONFIG=ON
  log "make ebml"
  run_make -C _b -j"$JOBS" ebml
}

run_recipe "$@"
