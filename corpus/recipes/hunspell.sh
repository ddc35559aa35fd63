#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Hunspell 1.7.1 (Debian's upstream tarball, C++): every object of the
# static spell-checking library (affix and dictionary handling, suggestion).
set -euo pipefail
RECIPE_NAME=hunspell
RECIPE_SUMMARY="Hunspell 1.7.1 from 'apt-get source hunspell' (C++): the static library's objects."
RECIPE_EXPECTED=10
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source hunspell "hunspell_1.7.1.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared (CXXFLAGS=-O0, about a minute)"
  run_logged nice -n 10 ./configure CC="$CC" CXX="$CXX" CFLAGS=-O0 CXXFLAGS=-O0 \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" --disable-shared --disable-nls \
    --disable-dependency-tracking
  log "make -C src/hunspell"
  run_make -C src/hunspell -j"$JOBS" CXXFLAGS="$MLGO_CXXFLAGS"
}

run_recipe "$@"
