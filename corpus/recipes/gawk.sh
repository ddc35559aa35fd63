#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU Awk 5.2.1 (Debian's upstream tarball): the gawk program and its
# support/ library, from configure/make; no MPFR, readline, NLS or dynamic
# extensions (machine-dependent or not part of the program).
set -euo pipefail
RECIPE_NAME=gawk
RECIPE_SUMMARY="GNU Awk 5.2.1 from 'apt-get source gawk': the gawk program's objects and gnulib's support library."
RECIPE_EXPECTED=36
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source gawk "gawk_5.2.1.orig.tar.*"
}

recipe_build() {
  log "configure (CFLAGS=-O0 for its test compiles)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" RANLIB="$RANLIB" \
    --disable-dependency-tracking --disable-nls --disable-mpfr --without-readline \
    --disable-extensions
  log "make -C support; make gawk"
  run_make -C support -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS" gawk
}

run_recipe "$@"
