#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# curl 7.88.1 (Debian's upstream tarball): the static libcurl and the curl
# program, configured without TLS and without the optional libraries whose
# presence would make the corpus depend on the machine (zlib stays).
set -euo pipefail
RECIPE_NAME=curl
RECIPE_SUMMARY="curl 7.88.1 from 'apt-get source curl': libcurl (no TLS) and the curl program."
RECIPE_EXPECTED=207
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source curl "curl_7.88.1.orig.tar.gz"
}

recipe_build() {
  log "configure --disable-shared --without-ssl (CFLAGS=-O0 for its test compiles)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --without-ssl --without-libpsl \
    --without-brotli --without-zstd --without-libidn2 --without-nghttp2 --without-nghttp3 \
    --without-ngtcp2 --without-librtmp --without-libssh2 --without-libssh --without-libgsasl \
    --disable-ldap --disable-ldaps --disable-manual
  log "make -C lib, make -C src"
  run_make -C lib -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
