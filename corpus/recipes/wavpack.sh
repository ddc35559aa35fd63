#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# WavPack 5.6.0 (Debian's upstream tarball of wavpack, C): every object of
# the static lossless/hybrid audio-compression library (the encoder and
# decoder with their decorrelation passes in C, entropy coding of words,
# floating-point and DSD audio, the extra encoding modes, the seek and
# tag layers for APEv2 and ID3v1, raw and pre-4.0 legacy files) and of the
# wavpack, wvunpack, wvgain and wvtag programs (WAV, Wave64, CAF, AIFF,
# DSDIFF and DSF readers and writers, MD5, ID3v2 import); no assembly, no
# libcrypto MD5, not the wvtest program.
set -euo pipefail
RECIPE_NAME=wavpack
RECIPE_SUMMARY="WavPack 5.6.0 from 'apt-get source wavpack' (C): the static library's and the wavpack, wvunpack, wvgain and wvtag programs' objects."
RECIPE_EXPECTED=50
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source wavpack "wavpack_5.6.0.orig.tar.*"
}

recipe_build() {
  # The x86-64 assembly of the decorrelation passes would leave objects
  # without bitcode in place of their C versions: --disable-asm. The
  # programs use the C library's iconv.
  log "configure --disable-shared --disable-asm --enable-legacy (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --enable-static --disable-shared --disable-dependency-tracking --disable-asm \
    --enable-legacy --disable-libcrypto
  log "make"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
