#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# TagLib 1.13 (Debian's upstream tarball of taglib, C++): every object of the
# static audio-metadata library (ID3v1, ID3v2 with its frame types, APE tags,
# Xiph comments, MP4 atoms, ASF attributes, RIFF INFO; the MPEG, FLAC, Ogg
# Vorbis/Opus/Speex/FLAC, MP4, ASF, WAV, AIFF, APE, Musepack, WavPack and
# TrueAudio formats and the MOD, S3M, IT and XM tracker modules; the string,
# byte-vector, map and list toolkit; C++98 as the project asks) and of its C
# binding libtag_c; no zlib (compressed ID3v2 frames stay unread), examples
# or tests.
set -euo pipefail
RECIPE_NAME=taglib
RECIPE_SUMMARY="TagLib 1.13 from 'apt-get source taglib' (C++): the static libtag's and libtag_c's objects."
RECIPE_EXPECTED=103
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source taglib "taglib_1.13.orig.tar.*"
}

recipe_build() {
  # The project asks for CMake 3.0, which CMake 4 refuses without a policy
  # minimum (older CMake ignores the variable).
  log "cmake (static libtag and libtag_c; no zlib)"
  cmake_configure -DWITH_ZLIB=OFF -DBUILD_BINDINGS=ON -DBUILD_EXAMPLES=OFF \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  log "make tag tag_c"
  run_make -C _b -j"$JOBS" tag tag_c
}

run_recipe "$@"
