#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# ZeroMQ 4.3.4 (Debian's upstream tarball of libzmq), C++: every object of
# the static library, built with CMake; no CURVE (libsodium), TLS, NORM,
# PGM, docs, tests or perf tools.
set -euo pipefail
RECIPE_NAME=zeromq
RECIPE_SUMMARY="ZeroMQ 4.3.4 from 'apt-get source zeromq3' (C++): the static libzmq."
RECIPE_EXPECTED=105
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source zeromq3 "zeromq3_4.3.4.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure -DBUILD_SHARED=OFF -DBUILD_STATIC=ON -DBUILD_TESTS=OFF -DWITH_LIBSODIUM=OFF \
    -DENABLE_CURVE=OFF -DWITH_TLS=OFF -DWITH_NSS=OFF -DWITH_NORM=OFF -DWITH_OPENPGM=OFF \
    -DWITH_DOCS=OFF -DWITH_PERF_TOOL=OFF -DENABLE_DRAFTS=OFF -DENABLE_CPACK=OFF
  log "make libzmq-static"
  run_make -C _b -j"$JOBS" libzmq-static
}

run_recipe "$@"
