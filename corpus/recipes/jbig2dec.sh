#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# jbig2dec 0.19 (Debian's upstream tarball, C): every object of the static
# JBIG2 bilevel-image decoding library (the MQ arithmetic and Huffman
# decoders, generic, refinement, MMR, text, symbol-dictionary, halftone and
# pattern regions, page composition, the Memento debugging allocator) and of
# the jbig2dec program; no libpng (PBM output only), no unit-test programs.
set -euo pipefail
RECIPE_NAME=jbig2dec
RECIPE_SUMMARY="jbig2dec 0.19 from 'apt-get source jbig2dec' (C): the static library's and the jbig2dec program's objects."
RECIPE_EXPECTED=19
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source jbig2dec "jbig2dec_0.19.orig.tar.*"
}

recipe_build() {
  # The upstream tarball has no configure script: autogen.sh writes
  # configure.ac and config_types.h.in, runs the autotools and then
  # configure with its arguments.
  log "autogen.sh and configure --disable-shared --without-libpng (CFLAGS=-O0)"
  run_logged nice -n 10 ./autogen.sh CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --without-libpng
  # `make all` would also build test_sha1, test_arith and test_huffman:
  # -DTEST copies of library files.
  log "make libjbig2dec.la jbig2dec"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS" libjbig2dec.la jbig2dec
}

run_recipe "$@"
