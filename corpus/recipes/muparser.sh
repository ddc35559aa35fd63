#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# muparser 2.3.3 (Debian's upstream tarball, C++): every object of the static
# math expression parser library (tokenizer, bytecode, callbacks, C API, and
# the self-test class that upstream keeps in the library), without OpenMP (a
# machine-dependent runtime); no samples.
set -euo pipefail
RECIPE_NAME=muparser
RECIPE_SUMMARY="muparser 2.3.3 from 'apt-get source muparser' (C++): the static library's objects."
RECIPE_EXPECTED=9
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source muparser "muparser_2.3.3.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no OpenMP, samples or tests)"
  cmake_configure -DENABLE_OPENMP=OFF -DENABLE_SAMPLES=OFF -DENABLE_WIDE_CHAR=OFF
  log "make muparser"
  run_make -C _b -j"$JOBS" muparser
}

run_recipe "$@"
