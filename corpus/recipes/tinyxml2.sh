#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# TinyXML-2 9.0.0 (Debian's upstream tarball, C++): the static XML parser
# library's one object.
set -euo pipefail
RECIPE_NAME=tinyxml2
RECIPE_SUMMARY="TinyXML-2 9.0.0 from 'apt-get source tinyxml2' (C++): the static library's object."
RECIPE_EXPECTED=1
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source tinyxml2 "tinyxml2_9.0.0+dfsg.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests)"
  cmake_configure -Dtinyxml2_BUILD_TESTING=OFF
  log "make tinyxml2"
  run_make -C _b -j"$JOBS" tinyxml2
}

run_recipe "$@"
