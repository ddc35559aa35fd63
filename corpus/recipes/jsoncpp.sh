#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# JsonCpp 1.9.5 (Debian's upstream tarball, C++): every object of the static
# JSON library.
set -euo pipefail
RECIPE_NAME=jsoncpp
RECIPE_SUMMARY="JsonCpp 1.9.5 from 'apt-get source libjsoncpp' (C++): the static library's objects."
RECIPE_EXPECTED=3
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libjsoncpp "libjsoncpp_1.9.5.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests or examples)"
  cmake_configure -DJSONCPP_WITH_TESTS=OFF -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF \
    -DJSONCPP_WITH_EXAMPLE=OFF -DBUILD_STATIC_LIBS=ON -DBUILD_OBJECT_LIBS=OFF
  log "make jsoncpp_static"
  run_make -C _b -j"$JOBS" jsoncpp_static
}

run_recipe "$@"
