#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libevent 2.1.12 (Debian's upstream tarball, C): every object of the static
# libevent (the event loop over epoll, poll and select, buffered events,
# evbuffers, the DNS resolver, HTTP server and client, RPC) and of
# libevent_pthreads; no OpenSSL bufferevents, samples or tests.
set -euo pipefail
RECIPE_NAME=libevent
RECIPE_SUMMARY="libevent 2.1.12 from 'apt-get source libevent' (C): the static libevent's and libevent_pthreads' objects."
RECIPE_EXPECTED=24
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libevent "libevent_2.1.12-stable.orig.tar.*"
}

recipe_build() {
  # zlib is looked for only for the regression tests: off, so that the
  # configuration is the same on every machine.
  log "configure --disable-shared --disable-openssl (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    ac_cv_header_zlib_h=no --disable-shared --disable-dependency-tracking --disable-openssl \
    --disable-samples --disable-libevent-regress
  # libevent.la is libevent_core's and libevent_extra's sources in one
  # library: building it alone compiles each file once.
  log "make libevent.la libevent_pthreads.la"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS" libevent.la libevent_pthreads.la
}

run_recipe "$@"
