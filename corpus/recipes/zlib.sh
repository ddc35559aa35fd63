#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# zlib 1.2.13 (Debian's upstream tarball): the 15 objects of the static libz.a.
set -euo pipefail
RECIPE_NAME=zlib
RECIPE_SUMMARY="zlib 1.2.13 from 'apt-get source zlib': the static library's objects."
RECIPE_EXPECTED=15
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source zlib "zlib_1.2.13*.orig.tar.*"
}

recipe_build() {
  log "configure --static"
  # --static: only libz.a's objects, no PIC duplicates (*.lo) for libz.so.
  run_logged env CFLAGS="$MLGO_CFLAGS" ./configure --static
  log "make libz.a"
  run_make -j"$JOBS" libz.a
}

run_recipe "$@"
