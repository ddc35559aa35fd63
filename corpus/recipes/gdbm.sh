#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU dbm 1.23 (Debian's upstream tarball of gdbm, C): every object of the
# static key-value database library (extendible hashing over a bucket
# directory, the bucket cache, the free-space (avail) lists, memory-mapped
# I/O, locking, reorganisation, recovery and consistency checks, ASCII and
# binary dump and load, Base64) and of its dbm/ndbm compatibility library,
# and of the gdbmtool, gdbm_dump and gdbm_load programs (gdbmtool's
# shipped Bison grammar and Flex scanner, its variables and shell); no
# readline, no native-language support, no crash tolerance.
set -euo pipefail
RECIPE_NAME=gdbm
RECIPE_SUMMARY="GNU dbm 1.23 from 'apt-get source gdbm' (C): the static libgdbm's, libgdbm_compat's and gdbm tools' objects."
RECIPE_EXPECTED=63
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source gdbm "gdbm_1.23.orig.tar.gz" # not its .asc
}

recipe_build() {
  log "configure --disable-shared --enable-libgdbm-compat --without-readline (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --enable-libgdbm-compat \
    --without-readline --disable-nls
  # The top level would also build the documentation (makeinfo) and tests.
  log "make -C src; make -C tools; make -C compat"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -C tools -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -C compat -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
