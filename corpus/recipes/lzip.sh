#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# lzip 1.23 (Debian's upstream tarball, C++): every object of the lzip
# compressor program.
set -euo pipefail
RECIPE_NAME=lzip
RECIPE_SUMMARY="lzip 1.23 from 'apt-get source lzip' (C++): the lzip program's objects."
RECIPE_EXPECTED=8
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lzip "lzip_1.23.orig.tar.*"
}

recipe_build() {
  log "configure"
  run_logged ./configure CXX="$CXX" CXXFLAGS="$MLGO_CXXFLAGS"
  log "make"
  run_make -j"$JOBS"
}

run_recipe "$@"
