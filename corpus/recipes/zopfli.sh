#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Zopfli 1.0.3 (Debian's upstream tarball, C): every object of the static
# libzopfli (the deflate, gzip and zlib compressor); not ZopfliPNG.
set -euo pipefail
RECIPE_NAME=zopfli
RECIPE_SUMMARY="Zopfli 1.0.3 from 'apt-get source zopfli' (C): the static libzopfli's objects."
RECIPE_EXPECTED=12
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source zopfli "zopfli_1.0.3.orig.tar.*"
}

recipe_build() {
  log "cmake (static library, no release default)"
  cmake_configure -DZOPFLI_DEFAULT_RELEASE=OFF -DZOPFLI_BUILD_INSTALL=OFF
  log "make libzopfli"
  run_make -C _b -j"$JOBS" libzopfli
}

run_recipe "$@"
