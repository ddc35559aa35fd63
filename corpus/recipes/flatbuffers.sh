#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# FlatBuffers 2.0.8 (Debian's upstream tarball, C++): every object of the
# static library (schema parser, reflection) and of the flatc schema
# compiler (its code generators); no tests, samples or flathash.
set -euo pipefail
RECIPE_NAME=flatbuffers
RECIPE_SUMMARY="FlatBuffers 2.0.8 from 'apt-get source flatbuffers' (C++): the static library and the flatc compiler."
RECIPE_EXPECTED=36
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source flatbuffers "flatbuffers_2.0.8+dfsg1.orig.tar.*"
}

recipe_build() {
  log "cmake (libstdc++, no tests)"
  cmake_configure -DFLATBUFFERS_BUILD_TESTS=OFF -DFLATBUFFERS_BUILD_FLATHASH=OFF \
    -DFLATBUFFERS_LIBCXX_WITH_CLANG=OFF -DFLATBUFFERS_INSTALL=OFF
  log "make flatbuffers flatc (a few minutes)"
  run_make -C _b -j"$JOBS" flatbuffers flatc
}

run_recipe "$@"
