#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libdivsufsort 2.0.1 (Debian's upstream tarball, C): every object of the
# static suffix-array construction library (induced sorting with
# substring and tandem-repeat sorts, Burrows-Wheeler transform, suffix-array
# search) and of its five example programs (suftest, mksary, sasearch, bwt,
# unbwt); 32-bit indices only (no libdivsufsort64), no OpenMP.
set -euo pipefail
RECIPE_NAME=libdivsufsort
RECIPE_SUMMARY="libdivsufsort 2.0.1 from 'apt-get source libdivsufsort' (C): the static library's and its example programs' objects."
RECIPE_EXPECTED=9
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libdivsufsort "libdivsufsort_2.0.1.orig.tar.*"
}

recipe_build() {
  # The project asks for CMake 2.4, which CMake 4 refuses without a policy
  # minimum (older CMake ignores the variable).
  log "cmake (static library and examples)"
  cmake_configure -DBUILD_EXAMPLES=ON -DBUILD_DIVSUFSORT64=OFF -DUSE_OPENMP=OFF \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  log "make"
  run_make -C _b -j"$JOBS"
}

run_recipe "$@"
