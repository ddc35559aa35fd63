#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libsodium 1.0.18 (Debian's upstream tarball, C): every object of the static
# cryptography library.
set -euo pipefail
RECIPE_NAME=libsodium
RECIPE_SUMMARY="libsodium 1.0.18 from 'apt-get source libsodium' (C): the static library's objects."
RECIPE_EXPECTED=104
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libsodium "libsodium_1.0.18.orig.tar.*"
}

recipe_build() {
  # The upstream tarball is a git archive: no configure script yet.
  log "autoreconf"
  run_logged autoreconf -fi
  gnu_configure_make --disable-shared --enable-static
}

run_recipe "$@"
