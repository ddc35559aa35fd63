#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# LevelDB 1.23 (Debian's upstream tarball), C++: every object of the static
# key-value store library. Snappy, crc32c and tcmalloc are switched off by
# hand (their checks would otherwise make the corpus depend on the machine).
set -euo pipefail
RECIPE_NAME=leveldb
RECIPE_SUMMARY="LevelDB 1.23 from 'apt-get source leveldb' (C++): the static library's objects."
RECIPE_EXPECTED=38
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source leveldb "leveldb_1.23.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only; no snappy, crc32c or tcmalloc)"
  cmake_configure -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF -DLEVELDB_INSTALL=OFF \
    -DHAVE_SNAPPY=OFF -DHAVE_CRC32C=OFF -DHAVE_TCMALLOC=OFF
  log "make leveldb"
  run_make -C _b -j"$JOBS" leveldb
}

run_recipe "$@"
