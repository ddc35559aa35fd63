#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libsndfile 1.2.0 (Debian's upstream tarball, C): every object of the static
# sound-file library (WAV, AIFF, AU, CAF, W64, RF64, IRCAM, VOC, PAF, SVX,
# NIST, MAT, SD2, WVE and other containers; PCM, float, u-law/A-law, IMA and
# MS ADPCM, DWVW, G.721/G.723, GSM 6.10 and ALAC codecs); no external codecs
# (FLAC, Vorbis, Opus, MPEG), programs, examples or tests.
set -euo pipefail
RECIPE_NAME=libsndfile
RECIPE_SUMMARY="libsndfile 1.2.0 from 'apt-get source libsndfile' (C): the static library's objects."
RECIPE_EXPECTED=92
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libsndfile "libsndfile_1.2.0.orig.tar.*"
}

recipe_build() {
  # No external codecs whatever the machine has: the library alone.
  log "cmake (static library; no FLAC, Vorbis, Opus or MPEG)"
  cmake_configure -DENABLE_EXTERNAL_LIBS=OFF -DENABLE_MPEG=OFF -DBUILD_PROGRAMS=OFF \
    -DBUILD_EXAMPLES=OFF -DENABLE_CPACK=OFF -DENABLE_PACKAGE_CONFIG=OFF \
    -DINSTALL_PKGCONFIG_MODULE=OFF
  log "make sndfile"
  run_make -C _b -j"$JOBS" sndfile
}

run_recipe "$@"
