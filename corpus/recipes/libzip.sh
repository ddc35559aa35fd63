#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libzip 1.7.3 (Debian's upstream tarball, C): every object of the static ZIP
# archive library (reading, creating and modifying archives, the central
# directory and extra fields, Zip64, deflate through zlib, traditional PKWARE
# encryption, source layers for files, buffers and windows) and of its tools
# zipcmp, zipmerge and ziptool; zlib only (no bzip2, LZMA or AES crypto
# backend), no regression tests, examples or documentation.
set -euo pipefail
RECIPE_NAME=libzip
RECIPE_SUMMARY="libzip 1.7.3 from 'apt-get source libzip' (C): the static library's and zipcmp's, zipmerge's and ziptool's objects."
RECIPE_EXPECTED=115
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libzip "libzip_1.7.3.orig.tar.*"
}

recipe_build() {
  # zlib is required (zlib1g-dev, scripts/setup.sh); every optional
  # compression and crypto library is switched off whatever the machine has.
  # The project asks for CMake 3.0.2, which CMake 4 refuses without a policy
  # minimum (older CMake ignores the variable).
  log "cmake (static library and tools; zlib only)"
  cmake_configure -DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF -DENABLE_MBEDTLS=OFF \
    -DENABLE_OPENSSL=OFF -DENABLE_WINDOWS_CRYPTO=OFF -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF \
    -DBUILD_TOOLS=ON -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  log "make zip zipcmp zipmerge ziptool"
  run_make -C _b -j"$JOBS" zip zipcmp zipmerge ziptool
}

run_recipe "$@"
