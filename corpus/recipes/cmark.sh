#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# cmark 0.30.2 (Debian's upstream tarball, C): every object of the static
# CommonMark parser and renderer library and of the cmark program; no shared
# library or tests.
set -euo pipefail
RECIPE_NAME=cmark
RECIPE_SUMMARY="cmark 0.30.2 from 'apt-get source cmark' (C): the static library's and the cmark program's objects."
RECIPE_EXPECTED=20
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source cmark "cmark_0.30.2.orig.tar.*"
}

recipe_build() {
  log "cmake (static library, no tests)"
  cmake_configure -DCMARK_STATIC=ON -DCMARK_SHARED=OFF -DCMARK_TESTS=OFF
  log "make cmark_exe"
  run_make -C _b -j"$JOBS" cmark_exe
}

run_recipe "$@"
