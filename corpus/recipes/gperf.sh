#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU gperf 3.1 (Debian's upstream tarball of gperf, C++): every object of
# the perfect-hash-function generator (the keyword-file parser and its
# option table, the key-position and associated-value search, the bool
# array and hash table it searches with, the C and C++ code generator for
# the lookup function and word list) and of its support library (getline,
# the hash function, and GNU getopt in C); C++14 (its `register`
# variables), no documentation or tests.
set -euo pipefail
RECIPE_NAME=gperf
RECIPE_SUMMARY="GNU gperf 3.1 from 'apt-get source gperf' (C++): the gperf program's and its support library's objects."
RECIPE_EXPECTED=15
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source gperf "gperf_3.1.orig.tar.*"
}

recipe_build() {
  # The top-level configure runs those of lib, src, tests and doc.
  log "configure (CFLAGS=-O0 CXXFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CXX="$CXX" CFLAGS=-O0 CXXFLAGS=-O0 \
    AR="$AR" RANLIB="$RANLIB"
  # The top level would also enter tests and doc. C++14: the sources
  # declare `register` variables, an error in clang's default C++17.
  log "make -C lib; make -C src (-std=gnu++14)"
  run_make -C lib -j"$JOBS" CFLAGS="$MLGO_CFLAGS" CXXFLAGS="-std=gnu++14 $MLGO_CXXFLAGS"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS" CXXFLAGS="-std=gnu++14 $MLGO_CXXFLAGS"
}

run_recipe "$@"
