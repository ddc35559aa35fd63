#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libdeflate 1.14 (Debian's upstream tarball, C): every object of the static
# libdeflate (DEFLATE, zlib and gzip compression, x86 and ARM CPU feature
# probes) and of its gzip program; no shared library or test programs.
set -euo pipefail
RECIPE_NAME=libdeflate
RECIPE_SUMMARY="libdeflate 1.14 from 'apt-get source libdeflate' (C): the static library's and the gzip program's objects."
RECIPE_EXPECTED=14
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libdeflate "libdeflate_1.14.orig.tar.*"
}

recipe_build() {
  # The Makefile puts its -O2 before CFLAGS: our -Oz comes last and wins.
  log "make libdeflate.a gzip"
  run_make -j"$JOBS" CC="$CC" AR="$AR" CFLAGS="$MLGO_CFLAGS" DISABLE_SHARED=1 libdeflate.a gzip
}

run_recipe "$@"
