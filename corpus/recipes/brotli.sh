#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Brotli 1.0.9 (Debian's upstream tarball, C): every object of the three
# static libraries, brotlicommon (dictionary, transforms), brotlidec and
# brotlienc; no brotli program. Fetched as brotli/bookworm: the security
# update 1.0.9-2+deb12u1 may be listed but missing from the mirror, and
# apt-get source brotli=1.0.9-2 still asks for it (same upstream tarball).
set -euo pipefail
RECIPE_NAME=brotli
RECIPE_SUMMARY="Brotli 1.0.9 from 'apt-get source brotli/bookworm' (C): the static libraries' objects."
RECIPE_EXPECTED=29
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source brotli/bookworm "brotli_1.0.9.orig.tar.*"
}

recipe_build() {
  log "cmake (static libraries only)"
  cmake_configure
  log "make brotlicommon-static brotlidec-static brotlienc-static"
  run_make -C _b -j"$JOBS" brotlicommon-static brotlidec-static brotlienc-static
}

run_recipe "$@"
