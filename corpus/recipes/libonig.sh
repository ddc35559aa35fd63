#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Oniguruma 6.9.8 (Debian's upstream tarball of libonig, C): every object of
# the static regular-expression library, its character encodings and its
# POSIX API.
set -euo pipefail
RECIPE_NAME=libonig
RECIPE_SUMMARY="Oniguruma 6.9.8 from 'apt-get source libonig' (C): the static library's objects (with the POSIX API)."
RECIPE_EXPECTED=50
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libonig "libonig_6.9.8.orig.tar.*"
}

recipe_build() {
  log "cmake (static library with the POSIX API)"
  cmake_configure -DENABLE_POSIX_API=ON -DINSTALL_DOCUMENTATION=OFF
  log "make onig"
  run_make -C _b -j"$JOBS" onig
}

run_recipe "$@"
