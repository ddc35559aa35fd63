#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# DjVuLibre 3.5.28 (Debian's upstream tarball of djvulibre, C++): every object
# of the static libdjvulibre (the DjVu document format: IW44 wavelet and JB2
# bilevel codecs, the ZP arithmetic coder, BZZ compression, IFF containers,
# annotations, text layers, the ddjvu API, the minilisp interpreter); no
# tools, no JPEG or TIFF support (switched off by hand).
set -euo pipefail
RECIPE_NAME=djvulibre
RECIPE_SUMMARY="DjVuLibre 3.5.28 from 'apt-get source djvulibre' (C++): the static libdjvulibre's objects."
RECIPE_EXPECTED=57
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source djvulibre "djvulibre_3.5.28.orig.tar.*"
}

recipe_build() {
  # The upstream tarball is a git archive: no configure script yet.
  log "autoreconf"
  run_logged autoreconf -fi
  log "configure --enable-static --disable-shared (no JPEG, TIFF or XML tools)"
  run_logged nice -n 10 ./configure CC="$CC" CXX="$CXX" CFLAGS=-O0 CXXFLAGS=-O0 \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" --enable-static --disable-shared \
    --disable-dependency-tracking --without-jpeg --without-tiff --disable-xmltools \
    --disable-desktopfiles
  # configure turns CXXFLAGS into '-O3 -DNDEBUG -Wall' (no --enable-debug):
  # our flags in their place, its -DNDEBUG kept. C++14: GBitmap.h declares
  # `register` variables, an error in clang's default C++17.
  log "make -C libdjvu (-std=gnu++14)"
  run_make -C libdjvu -j"$JOBS" CXXFLAGS="-std=gnu++14 $MLGO_CXXFLAGS -DNDEBUG"
}

run_recipe "$@"
