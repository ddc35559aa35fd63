#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libjpeg-turbo 2.1.5 (Debian's upstream tarball): every object of the
# static libjpeg library, portable C only (no SIMD: its assembly needs nasm
# and is not C).
set -euo pipefail
RECIPE_NAME=libjpeg-turbo
RECIPE_SUMMARY="libjpeg-turbo 2.1.5 from 'apt-get source libjpeg-turbo': the static libjpeg's objects (no SIMD)."
RECIPE_EXPECTED=52
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libjpeg-turbo "libjpeg-turbo_2.1.5.orig.tar.*"
}

recipe_build() {
  log "cmake (static libjpeg only, no SIMD, no TurboJPEG API)"
  cmake_configure -DENABLE_SHARED=OFF -DENABLE_STATIC=ON -DWITH_SIMD=OFF -DWITH_TURBOJPEG=OFF
  log "make jpeg-static"
  run_make -C _b -j"$JOBS" jpeg-static
}

run_recipe "$@"
