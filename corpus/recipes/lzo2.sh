#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# LZO 2.10 (Debian's upstream tarball): every object of the static
# compression library (all of its LZO1x algorithm families).
set -euo pipefail
RECIPE_NAME=lzo2
RECIPE_SUMMARY="LZO 2.10 from 'apt-get source lzo2': the static library's objects."
RECIPE_EXPECTED=67
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lzo2 "lzo2_2.10.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure -DENABLE_STATIC=ON -DENABLE_SHARED=OFF
  log "make lzo_static_lib"
  run_make -C _b -j"$JOBS" lzo_static_lib
}

run_recipe "$@"
