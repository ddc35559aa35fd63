#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Protocol Buffers 3.21.12 (Debian's upstream tarball), C++: the runtime
# (libprotobuf) and the compiler library (libprotoc, every language's code
# generator), built with CMake; no zlib, tests or protoc binary. About 15
# minutes on two cores.
set -euo pipefail
RECIPE_NAME=protobuf
RECIPE_SUMMARY="Protocol Buffers 3.21.12 from 'apt-get source protobuf' (C++): libprotobuf and libprotoc."
RECIPE_EXPECTED=167
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source protobuf "protobuf_3.21.12.orig.tar.*"
}

recipe_build() {
  log "cmake (libprotobuf and libprotoc)"
  cmake_configure -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_WITH_ZLIB=OFF -Dprotobuf_BUILD_SHARED_LIBS=OFF
  log "make libprotobuf libprotoc"
  run_make -C _b -j"$JOBS" libprotobuf libprotoc
}

run_recipe "$@"
