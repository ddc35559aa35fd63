#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# double-conversion 3.2.1 (Debian's upstream tarball, C++): every object of
# the static library that converts between binary and decimal numbers.
set -euo pipefail
RECIPE_NAME=double-conversion
RECIPE_SUMMARY="double-conversion 3.2.1 from 'apt-get source double-conversion' (C++): the static library's objects."
RECIPE_EXPECTED=8
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source double-conversion "double-conversion_3.2.1.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure
  log "make double-conversion"
  run_make -C _b -j"$JOBS" double-conversion
}

run_recipe "$@"
