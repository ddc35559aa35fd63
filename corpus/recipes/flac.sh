#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# FLAC 1.4.2 (Debian's upstream tarball): libFLAC (encoder, decoder,
# metadata) and the flac and metaflac programs with their helper libraries;
# no Ogg (a machine-dependent library), no C++ bindings, examples or tests.
set -euo pipefail
RECIPE_NAME=flac
RECIPE_SUMMARY="FLAC 1.4.2 from 'apt-get source flac': libFLAC and the flac and metaflac programs (C only)."
RECIPE_EXPECTED=60
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source flac "flac_1.4.2*.orig.tar.*"
}

recipe_build() {
  log "cmake (libFLAC, flac, metaflac; no Ogg, no C++)"
  cmake_configure -DWITH_OGG=OFF -DBUILD_CXXLIBS=OFF -DBUILD_PROGRAMS=ON -DBUILD_EXAMPLES=OFF \
    -DBUILD_DOCS=OFF -DINSTALL_MANPAGES=OFF -DWITH_STACK_PROTECTOR=OFF
  log "make flac metaflac"
  run_make -C _b -j"$JOBS" flacapp metaflac
}

run_recipe "$@"
