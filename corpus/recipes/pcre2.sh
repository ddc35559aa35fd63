#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# PCRE2 10.42 (Debian's upstream tarball): the 8-bit library (no JIT, the
# default), the POSIX wrapper and the pcre2grep and pcre2test programs, as its
# configure/make build makes them.
set -euo pipefail
RECIPE_NAME=pcre2
RECIPE_SUMMARY="PCRE2 10.42 from 'apt-get source pcre2': libpcre2-8, libpcre2-posix, pcre2grep and pcre2test."
RECIPE_EXPECTED=31
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source pcre2 "pcre2_10.42.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared (8-bit library, no JIT)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS="$MLGO_CFLAGS" \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking
  log "make"
  run_make -j"$JOBS"
}

run_recipe "$@"
