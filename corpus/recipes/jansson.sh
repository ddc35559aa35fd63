#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Jansson 2.14 (Debian's upstream tarball, C): every object of the static
# JSON library (parser, encoder, value model, pack/unpack, hashtable).
set -euo pipefail
RECIPE_NAME=jansson
RECIPE_SUMMARY="Jansson 2.14 from 'apt-get source jansson' (C): the static library's objects."
RECIPE_EXPECTED=12
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source jansson "jansson_2.14.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests, examples or docs)"
  cmake_configure -DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_EXAMPLES=OFF \
    -DJANSSON_WITHOUT_TESTS=ON -DJANSSON_BUILD_DOCS=OFF
  log "make jansson"
  run_make -C _b -j"$JOBS" jansson
}

run_recipe "$@"
