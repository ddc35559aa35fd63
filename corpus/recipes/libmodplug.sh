#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libmodplug 0.8.9.0 (Debian's upstream tarball, C++): every object of the
# static tracker-module (MOD, S3M, XM, IT, MIDI, ...) decoding library.
set -euo pipefail
RECIPE_NAME=libmodplug
RECIPE_SUMMARY="libmodplug 0.8.9.0 from 'apt-get source libmodplug' (C++): the static library's objects."
RECIPE_EXPECTED=34
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libmodplug "libmodplug_0.8.9.0.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared (CXXFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CXX="$CXX" CFLAGS=-O0 CXXFLAGS=-O0 \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" --disable-shared --disable-dependency-tracking
  # C++14: the mixer's macros declare `register` variables, an error in
  # clang's default C++17.
  log "make (-std=gnu++14)"
  run_make -j"$JOBS" CXXFLAGS="-std=gnu++14 $MLGO_CXXFLAGS"
}

run_recipe "$@"
