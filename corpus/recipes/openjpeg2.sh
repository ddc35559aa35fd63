#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# OpenJPEG 2.5.0 (Debian's upstream tarball of openjpeg2, C): every object of
# the static JPEG 2000 codec library libopenjp2 (the J2K codestream and JP2
# box readers and writers, tile coding and decoding, the 5/3 and 9/7
# discrete wavelet transforms, the EBCOT tier-1 coder with its MQ
# arithmetic coder, the HTJ2K (part 15) block decoder, tier-2 packets and
# the progression iterators, tag trees, the multi-component transforms,
# rate allocation, sparse arrays, the thread pool, matrix inversion, the
# event handlers); not the JPIP index writers, no codec programs (their
# PNG, TIFF and LCMS2 would come from the machine), no unit tests or LUT
# generators.
set -euo pipefail
RECIPE_NAME=openjpeg2
RECIPE_SUMMARY="OpenJPEG 2.5.0 from 'apt-get source openjpeg2' (C): the static libopenjp2's objects."
RECIPE_EXPECTED=22
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source openjpeg2 "openjpeg2_2.5.0.orig.tar.*"
}

recipe_build() {
  # The project asks for CMake 2.8.2, which CMake 4 refuses without a policy
  # minimum (older CMake ignores the variable). Its -ffast-math for Release
  # builds is for GCC only.
  log "cmake (static libopenjp2, no codec programs)"
  cmake_configure -DBUILD_STATIC_LIBS=ON -DBUILD_CODEC=OFF -DBUILD_PKGCONFIG_FILES=OFF \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  log "make openjp2"
  run_make -C _b -j"$JOBS" openjp2
}

run_recipe "$@"
