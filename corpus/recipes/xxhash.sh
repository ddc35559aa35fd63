#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# xxHash 0.8.1 (Debian's upstream tarball of xxhash, C): every object of the
# xxhsum program: the xxHash library (XXH32, XXH64, XXH3), its x86
# dispatcher (SSE2, AVX2, AVX-512 variants) and the command-line tool.
set -euo pipefail
RECIPE_NAME=xxhash
RECIPE_SUMMARY="xxHash 0.8.1 from 'apt-get source xxhash' (C): the xxhsum program's objects."
RECIPE_EXPECTED=7
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source xxhash "xxhash_0.8.1.orig.tar.*"
}

recipe_build() {
  # Our flags in place of the Makefile's -O3 (its warnings stay: -w silences
  # them); DISPATCH=1 adds the run-time x86 dispatcher, as Debian builds it.
  log "make xxhsum DISPATCH=1"
  run_make -j"$JOBS" CC="$CC" CFLAGS="$MLGO_CFLAGS" DISPATCH=1 xxhsum
}

run_recipe "$@"
