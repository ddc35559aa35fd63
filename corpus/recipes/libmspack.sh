#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libmspack 0.11alpha (Debian's upstream tarball of libmspack, C): every
# object of the static library for Microsoft's compression formats (the
# CAB, CHM, SZDD, KWAJ and Exchange OAB (with CRC-32) decompressors, the
# compressor and HLP/LIT stubs, the LZX, Quantum, MSZIP (inflate), LZSS and
# KWAJ Huffman decoders over its shared bit-reader macros, the system layer
# of file handles) and
# of the example and tool programs (cabrip, cabd_memory, chmextract,
# msexpand, multifh, oabextract, chminfo, chmd_find, chmd_order and the
# cabd_md5 and chmd_md5 listers with their MD5); not the test suite.
set -euo pipefail
RECIPE_NAME=libmspack
RECIPE_SUMMARY="libmspack 0.11alpha from 'apt-get source libmspack' (C): the static library's and its example and tool programs' objects."
RECIPE_EXPECTED=34
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libmspack "libmspack_0.11.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking
  # `make` builds libmspack and the CAB-only and CHM-only convenience
  # libraries (the same objects) and the noinst programs; the test suite's
  # programs are built by `make check` only.
  log "make"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
