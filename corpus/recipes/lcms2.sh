#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Little CMS 2.14 (Debian's upstream tarball of lcms2, C): every object of
# the static colour-management library; no utilities (each would compile
# its own copy of the shared helpers), no plugins.
set -euo pipefail
RECIPE_NAME=lcms2
RECIPE_SUMMARY="Little CMS 2.14 from 'apt-get source lcms2' (C): the static liblcms2's objects."
RECIPE_EXPECTED=26
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lcms2 "lcms2_2.14.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared (no JPEG, TIFF or zlib)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --without-jpeg --without-tiff --without-zlib
  log "make -C src"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
