#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Mbed TLS 2.28.3 (Debian's upstream tarball, C): every object of the three
# static libraries, libmbedcrypto, libmbedx509 and libmbedtls, in the default
# configuration (include/mbedtls/config.h); no programs or tests.
set -euo pipefail
RECIPE_NAME=mbedtls
RECIPE_SUMMARY="Mbed TLS 2.28.3 from 'apt-get source mbedtls' (C): the static libraries' objects."
RECIPE_EXPECTED=96
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source mbedtls "mbedtls_2.28.3.orig.tar.*"
}

recipe_build() {
  log "cmake (static libraries only, no programs or tests)"
  cmake_configure -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF -DMBEDTLS_FATAL_WARNINGS=OFF \
    -DUSE_STATIC_MBEDTLS_LIBRARY=ON -DUSE_SHARED_MBEDTLS_LIBRARY=OFF
  log "make mbedcrypto mbedx509 mbedtls"
  run_make -C _b -j"$JOBS" mbedcrypto mbedx509 mbedtls
}

run_recipe "$@"
