#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libogg 1.3.5 (Debian's upstream tarball, C): the static Ogg container
# library's objects (bit packing and page framing).
set -euo pipefail
RECIPE_NAME=libogg
RECIPE_SUMMARY="libogg 1.3.5 from 'apt-get source libogg' (C): the static library's objects."
RECIPE_EXPECTED=2
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libogg "libogg_1.3.5.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests)"
  cmake_configure -DINSTALL_DOCS=OFF
  log "make ogg"
  run_make -C _b -j"$JOBS" ogg
}

run_recipe "$@"
