#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Ninja 1.11.1 (Debian's upstream tarball, pinned), C++: every object of the
# ninja executable as its CMake build makes it (libninja, the lexers, browse
# mode, main); no tests or perf tests.
set -euo pipefail
RECIPE_NAME=ninja
RECIPE_SUMMARY="Ninja 1.11.1 from 'apt-get source ninja-build=1.11.1-2~deb12u1' (C++): the objects of the ninja program."
RECIPE_EXPECTED=29
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source ninja-build=1.11.1-2~deb12u1 "ninja-build_1.11.1.orig.tar.*"
}

recipe_build() {
  # RE2C=OFF: use the lexers the tarball ships (src/lexer.cc,
  # src/depfile_parser.cc) even where re2c is installed, so the modules do not
  # depend on the host's re2c (an OFF value is "found", so CMake does not look).
  log "cmake (no tests)"
  cmake_configure -DRE2C=OFF
  log "make ninja"
  run_make -C _b -j"$JOBS" ninja
}

run_recipe "$@"
