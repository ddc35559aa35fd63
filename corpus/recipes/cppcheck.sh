#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Cppcheck 2.10 (Debian's upstream tarball), C++: the analysis library,
# the command-line program and the bundled tinyxml2 and simplecpp, built with
# CMake; no GUI, rules (PCRE) or tests. Its largest files take minutes each.
set -euo pipefail
RECIPE_NAME=cppcheck
RECIPE_SUMMARY="Cppcheck 2.10 from 'apt-get source cppcheck' (C++): the analysis library and the command-line program."
RECIPE_EXPECTED=76
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source cppcheck "cppcheck_2.10.orig.tar.gz"
}

recipe_build() {
  log "cmake (library and cli)"
  cmake_configure -DBUILD_GUI=OFF -DBUILD_TESTS=OFF -DHAVE_RULES=OFF -DUSE_MATCHCOMPILER=Off \
    -DENABLE_OSS_FUZZ=OFF -DUSE_BUNDLED_TINYXML2=ON
  log "make cppcheck (about 10 minutes)"
  run_make -C _b -j"$JOBS" cppcheck
}

run_recipe "$@"
