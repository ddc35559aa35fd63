#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Exiv2 0.27.6 (Debian's upstream tarball of exiv2, C++): every object of the
# static image-metadata library (Exif, IPTC and ICC in JPEG, TIFF, PNG, GIF,
# BMP, WebP, JPEG 2000, PSD, EPS, TGA and the camera raw formats CR2, CRW,
# NEF, ORF, RW2, RAF, MRW; the TIFF parser and encoder with their visitors,
# the makernotes of Canon, Nikon, Olympus, Sony, Pentax, Fuji and others,
# the lens tables) and of the exiv2 program; PNG through zlib, no XMP (which
# would need Expat), no BMFF, video, network I/O, NLS or samples. C++98 and
# the project's own hardening flags (stack protector, _GLIBCXX_ASSERTIONS,
# _FORTIFY_SOURCE) are kept.
set -euo pipefail
RECIPE_NAME=exiv2
RECIPE_SUMMARY="Exiv2 0.27.6 from 'apt-get source exiv2' (C++): the static library's and the exiv2 program's objects."
RECIPE_EXPECTED=66
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source exiv2 "exiv2_0.27.6.orig.tar.*"
}

recipe_build() {
  # Exiv2 picks the Release build type itself: its per-type flags are
  # emptied (cmake_configure), the -D_FORTIFY_SOURCE=2 it adds for Release
  # stays. zlib (PNG) is required by scripts/setup.sh; Expat is not.
  log "cmake (static library and the exiv2 program; PNG, no XMP)"
  cmake_configure -DEXIV2_ENABLE_XMP=OFF -DEXIV2_ENABLE_PNG=ON -DEXIV2_ENABLE_NLS=OFF \
    -DEXIV2_ENABLE_VIDEO=OFF -DEXIV2_ENABLE_WEBREADY=OFF -DEXIV2_ENABLE_CURL=OFF \
    -DEXIV2_ENABLE_SSH=OFF -DEXIV2_ENABLE_BMFF=OFF -DEXIV2_BUILD_SAMPLES=OFF \
    -DEXIV2_BUILD_EXIV2_COMMAND=ON -DEXIV2_BUILD_UNIT_TESTS=OFF -DEXIV2_BUILD_DOC=OFF
  log "make exiv2lib exiv2 (a few minutes)"
  run_make -C _b -j"$JOBS" exiv2lib exiv2
}

run_recipe "$@"
