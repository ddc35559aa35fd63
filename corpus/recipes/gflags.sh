#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# gflags 2.2.2 (Debian's upstream tarball, C++): every object of the static,
# multi-threaded command-line flags library (flag registry, reporting, shell
# completion); not the single-threaded variant, which compiles the same three
# files again.
set -euo pipefail
RECIPE_NAME=gflags
RECIPE_SUMMARY="gflags 2.2.2 from 'apt-get source gflags' (C++): the static library's objects."
RECIPE_EXPECTED=3
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source gflags "gflags_2.2.2.orig.tar.*"
}

recipe_build() {
  log "cmake (static multi-threaded library only, no tests)"
  cmake_configure -DBUILD_STATIC_LIBS=ON -DBUILD_gflags_LIB=ON -DBUILD_gflags_nothreads_LIB=OFF \
    -DBUILD_PACKAGING=OFF
  log "make gflags_static"
  run_make -C _b -j"$JOBS" gflags_static
}

run_recipe "$@"
