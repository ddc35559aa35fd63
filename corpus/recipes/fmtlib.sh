#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# {fmt} 9.1.0 (Debian's upstream tarball, C++): every object of the static
# formatting library.
set -euo pipefail
RECIPE_NAME=fmtlib
RECIPE_SUMMARY="{fmt} 9.1.0 from 'apt-get source fmtlib' (C++): the static library's objects."
RECIPE_EXPECTED=2
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source fmtlib "fmtlib_9.1.0+ds1.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests or docs)"
  cmake_configure -DFMT_TEST=OFF -DFMT_DOC=OFF -DFMT_INSTALL=OFF
  log "make fmt"
  run_make -C _b -j"$JOBS" fmt
}

run_recipe "$@"
