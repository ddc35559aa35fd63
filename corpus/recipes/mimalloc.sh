#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# mimalloc 2.0.9 (Debian's upstream tarball, C): every object of the static
# general-purpose memory allocator (segments, pages, arenas, free lists,
# the malloc/posix_memalign/new overrides, statistics); no shared library,
# single-object build or tests.
set -euo pipefail
RECIPE_NAME=mimalloc
RECIPE_SUMMARY="mimalloc 2.0.9 from 'apt-get source mimalloc' (C): the static library's objects."
RECIPE_EXPECTED=14
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source mimalloc "mimalloc_2.0.9+ds.orig.tar.*"
}

recipe_build() {
  # mimalloc picks the Release build type itself; its -O3 stays out (the
  # emptied per-type flags) but its -DNDEBUG is given back: without it the
  # allocator is built in debug mode (MI_DEBUG=2, internal assertions).
  log "cmake (static library, release mode: -DNDEBUG)"
  cmake_configure -DMI_BUILD_SHARED=OFF -DMI_BUILD_OBJECT=OFF -DMI_BUILD_TESTS=OFF \
    -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG
  log "make mimalloc-static"
  run_make -C _b -j"$JOBS" mimalloc-static
}

run_recipe "$@"
