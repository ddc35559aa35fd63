#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU Libtasn1 4.19.0 (Debian's upstream tarball of libtasn1-6, C): every
# object of the static ASN.1 library (the ASN.1 definitions parser, DER
# encoding and decoding, the structure tree and its element access) with its
# gnulib, and of the asn1Parser, asn1Coding and asn1Decoding programs with
# theirs; no shared library, fuzzers, tests or documentation.
set -euo pipefail
RECIPE_NAME=libtasn1-6
RECIPE_SUMMARY="GNU Libtasn1 4.19.0 from 'apt-get source libtasn1-6' (C): the static library's and its three programs' objects."
RECIPE_EXPECTED=27
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libtasn1-6 "libtasn1-6_4.19.0.orig.tar.gz" # not its .asc
}

recipe_build() {
  log "configure --disable-shared (CFLAGS=-O0, no documentation)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --disable-doc --disable-gtk-doc \
    --disable-valgrind-tests --disable-gcc-warnings
  # The top-level make would also build the fuzzers' corpus2array helper.
  log "make -C lib; make -C src"
  run_make -C lib -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
