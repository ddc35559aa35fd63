#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GIFLIB 5.2.1 (Debian's upstream tarball, C): every object of its two static
# libraries, libgif (GIF decoder and encoder) and libutil (the utilities'
# quantizer, argument parser and printer); no utilities or docs.
set -euo pipefail
RECIPE_NAME=giflib
RECIPE_SUMMARY="GIFLIB 5.2.1 from 'apt-get source giflib' (C): the static libgif's and libutil's objects."
RECIPE_EXPECTED=10
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source giflib "giflib_5.2.1.orig.tar.*"
}

recipe_build() {
  # OFLAGS is the Makefile's -O2: our flags in its place, its CFLAGS
  # (-std=gnu99 -fPIC -Wall) stay.
  log "make libgif.a libutil.a"
  run_make -j"$JOBS" CC="$CC" AR="$AR" OFLAGS="$MLGO_CFLAGS" libgif.a libutil.a
}

run_recipe "$@"
