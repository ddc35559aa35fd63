#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# YAJL 2.1.0 (Debian's upstream tarball, C): every object of the static
# streaming JSON parser and generator library; no tools or tests.
set -euo pipefail
RECIPE_NAME=yajl
RECIPE_SUMMARY="YAJL 2.1.0 from 'apt-get source yajl' (C): the static library's objects."
RECIPE_EXPECTED=9
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source yajl "yajl_2.1.0.orig.tar.*"
}

recipe_build() {
  log "cmake"
  cmake_configure
  log "make yajl_s"
  run_make -C _b -j"$JOBS" yajl_s
}

run_recipe "$@"
