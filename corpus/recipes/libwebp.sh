#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libwebp 1.2.4 (Debian's upstream tarball): the encoder and decoder
# library (with its SSE2/SSE4.1 files, compiled with the flags the project
# gives them), the demux and mux libraries; no tools (they need libpng, jpeg
# and gif, which would make the corpus depend on the machine).
set -euo pipefail
RECIPE_NAME=libwebp
RECIPE_SUMMARY="libwebp 1.2.4 from 'apt-get source libwebp': the libwebp, libwebpdemux and libwebpmux libraries' objects."
RECIPE_EXPECTED=88
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libwebp "libwebp_1.2.4.orig.tar.gz"
}

recipe_build() {
  log "cmake (libraries only)"
  cmake_configure -DWEBP_BUILD_ANIM_UTILS=OFF -DWEBP_BUILD_CWEBP=OFF -DWEBP_BUILD_DWEBP=OFF \
    -DWEBP_BUILD_GIF2WEBP=OFF -DWEBP_BUILD_IMG2WEBP=OFF -DWEBP_BUILD_VWEBP=OFF \
    -DWEBP_BUILD_WEBPINFO=OFF -DWEBP_BUILD_WEBPMUX=OFF -DWEBP_BUILD_EXTRAS=OFF
  log "make webp webpdemux libwebpmux"
  run_make -C _b -j"$JOBS" webp webpdemux libwebpmux
}

run_recipe "$@"
