#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU FriBidi 1.0.8 (Debian's upstream tarball of fribidi, C): every object
# of the static Unicode bidirectional-algorithm library (the UAX #9 resolver
# with its embedding levels, bracket pairs and run lists, reordering,
# Arabic joining and shaping, mirroring, the packed Unicode property tables
# shipped with the tarball, the UTF-8, CapRTL, ISO-8859-6/-8 and CP1255/1256
# charset converters, the deprecated API) and of the fribidi program and its
# three helper programs (fribidi-benchmark, fribidi-bidi-types,
# fribidi-caprtl2utf8) with their getopt; the table generators are not run.
set -euo pipefail
RECIPE_NAME=fribidi
RECIPE_SUMMARY="GNU FriBidi 1.0.8 from 'apt-get source fribidi' (C): the static library's and the fribidi programs' objects."
RECIPE_EXPECTED=24
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source fribidi "fribidi_1.0.8.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking
  # The top level would also enter gen.tab (the table generators, needed only
  # to regenerate the shipped tables), doc and test.
  log "make -C lib; make -C bin"
  run_make -C lib -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -C bin -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
