#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# OpenSSL 3.0 (Debian's upstream tarball, the version the archive offers):
# static libcrypto and libssl with the default, legacy and base providers and
# the openssl program, as its Configure/make build makes them. The perlasm
# assembly is built too (as a real build does) and leaves the corpus with the
# other objects that have no bitcode. CFLAGS given to Configure replace its
# -O3.
set -euo pipefail
RECIPE_NAME=openssl
RECIPE_SUMMARY="OpenSSL 3.0 from 'apt-get source openssl': libcrypto, libssl, the providers and the openssl program (C; assembly left out of the corpus)."
RECIPE_EXPECTED=998
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source openssl "openssl_3.0.*.orig.tar.gz"
}

recipe_build() {
  log "Configure linux-x86_64 no-shared no-tests"
  run_logged nice -n 10 ./Configure linux-x86_64 no-shared no-tests \
    CC="$CC" CFLAGS="$MLGO_CFLAGS" AR="$AR" RANLIB="$RANLIB"
  log "make build_programs (libraries and the openssl program; about 15 minutes)"
  run_make -j"$JOBS" build_programs
}

run_recipe "$@"
