#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libarchive 3.6.2 (Debian's upstream tarball): the static library and the
# bsdtar, bsdcpio and bsdcat programs, built with CMake. Of the optional
# libraries only zlib stays (the others would make the corpus depend on the
# machine).
set -euo pipefail
RECIPE_NAME=libarchive
RECIPE_SUMMARY="libarchive 3.6.2 from 'apt-get source libarchive': the static library and bsdtar, bsdcpio, bsdcat."
RECIPE_EXPECTED=140
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libarchive "libarchive_3.6.2.orig.tar.xz"
}

recipe_build() {
  log "cmake (zlib only)"
  cmake_configure -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
    -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF \
    -DENABLE_LZMA=OFF -DENABLE_ZSTD=OFF -DENABLE_BZip2=OFF -DENABLE_LIBB2=OFF \
    -DENABLE_ACL=OFF -DENABLE_ICONV=OFF -DENABLE_CNG=OFF -DENABLE_TEST=OFF -DENABLE_COVERAGE=OFF
  log "make archive_static bsdtar bsdcpio bsdcat"
  run_make -C _b -j"$JOBS" archive_static bsdtar bsdcpio bsdcat
}

run_recipe "$@"
