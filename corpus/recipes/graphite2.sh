#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Graphite2 1.3.14 (Debian's upstream tarball, C++): every object of the
# static smart-font rendering library; no tests or tools.
set -euo pipefail
RECIPE_NAME=graphite2
RECIPE_SUMMARY="Graphite2 1.3.14 from 'apt-get source graphite2' (C++): the static library's objects."
RECIPE_EXPECTED=29
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source graphite2 "graphite2_1.3.14.orig.tar.*"
}

recipe_build() {
  log "cmake (static library)"
  cmake_configure
  log "make graphite2"
  run_make -C _b -j"$JOBS" graphite2
}

run_recipe "$@"
