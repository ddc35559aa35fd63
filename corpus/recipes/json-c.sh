#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# json-c 0.16 (Debian's upstream tarball): every object of the static
# JSON library (parser, printer, object model, pointer and patch support).
set -euo pipefail
RECIPE_NAME=json-c
RECIPE_SUMMARY="json-c 0.16 from 'apt-get source json-c': the static library's objects."
RECIPE_EXPECTED=13
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source json-c "json-c_0.16.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure -DBUILD_STATIC_LIBS=ON -DDISABLE_WERROR=ON
  log "make json-c"
  run_make -C _b -j"$JOBS" json-c
}

run_recipe "$@"
