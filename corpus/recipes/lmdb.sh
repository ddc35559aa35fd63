#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# LMDB 0.9.24 (Debian's upstream tarball, C): the static liblmdb (the
# B+tree database and its ID lists); no tools.
set -euo pipefail
RECIPE_NAME=lmdb
RECIPE_SUMMARY="LMDB 0.9.24 from 'apt-get source lmdb' (C): the static liblmdb's objects."
RECIPE_EXPECTED=2
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lmdb "lmdb_0.9.24.orig.tar.*"
}

recipe_build() {
  # OPT is the Makefile's -O2 -g: our flags in its place, its warnings stay.
  log "make liblmdb.a"
  run_make -C libraries/liblmdb -j"$JOBS" CC="$CC" AR="$AR" OPT="$MLGO_CFLAGS" liblmdb.a
}

run_recipe "$@"
