#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# hiredis 0.14.1 (Debian's upstream tarball, C): every object of the static
# Redis client library (synchronous and asynchronous API, reply parser, SDS
# strings); no tests or examples.
set -euo pipefail
RECIPE_NAME=hiredis
RECIPE_SUMMARY="hiredis 0.14.1 from 'apt-get source hiredis' (C): the static library's objects."
RECIPE_EXPECTED=6
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source hiredis "hiredis_0.14.1.orig.tar.*"
}

recipe_build() {
  # OPTIMIZATION is the Makefile's -O3, DEBUG_FLAGS its -g -ggdb: our flags
  # in their place, its -fPIC and warnings stay.
  log "make static"
  run_make -j"$JOBS" CC="$CC" OPTIMIZATION="$MLGO_CFLAGS" DEBUG_FLAGS= static
}

run_recipe "$@"
