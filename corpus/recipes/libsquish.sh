#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libsquish 1.15 (Debian's upstream tarball of libsquish, C++): every object
# of the static DXT (S3TC: DXT1, DXT3, DXT5 / BC1-BC3) texture-compression
# library (the colour set of a 4x4 block, the single-colour lookup, range
# and cluster fits with its principal-component and iterative
# ordering search over the SSE2 vector class, colour and alpha block
# packing and unpacking, the image-level compress, decompress and error
# metrics) and of the squishtest program; no OpenMP, not the squishpng
# (libpng) program.
set -euo pipefail
RECIPE_NAME=libsquish
RECIPE_SUMMARY="libsquish 1.15 from 'apt-get source libsquish' (C++): the static library's and the squishtest program's objects."
RECIPE_EXPECTED=10
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libsquish "libsquish_1.15.orig.tar.*"
}

recipe_build() {
  # The tarball has no top-level directory: unpack_source's
  # --strip-components=1 kept only its subdirectories' files, one level up.
  # Unpack it again as it is.
  find . -mindepth 1 -delete
  run_logged tar -xf "$SOURCE_ARCHIVE" --no-same-owner
  # OpenMP would depend on the machine's libomp; the project adds
  # -DSQUISH_USE_SSE=2 -msse2. It asks for CMake 2.8.3, which CMake 4
  # refuses without a policy minimum (older CMake ignores the variable).
  log "cmake (static library and squishtest, SSE2, no OpenMP)"
  cmake_configure -DBUILD_SQUISH_WITH_OPENMP=OFF -DBUILD_SQUISH_EXTRA=ON \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  log "make squish squishtest"
  run_make -C _b -j"$JOBS" squish squishtest
}

run_recipe "$@"
