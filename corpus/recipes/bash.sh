#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU Bash 5.2.15 (Debian's upstream tarball): the shell and its bundled
# libraries (readline, history, glob, tilde, sh), as configure/make build
# them; glibc's malloc instead of bash's own, no NLS.
set -euo pipefail
RECIPE_NAME=bash
RECIPE_SUMMARY="GNU Bash 5.2.15 from 'apt-get source bash': the shell's objects with its readline, glob, tilde and sh libraries."
RECIPE_EXPECTED=183
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source bash "bash_5.2.15.orig.tar.*"
}

recipe_build() {
  log "configure (CFLAGS=-O0 for its test compiles)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" RANLIB="$RANLIB" \
    --without-bash-malloc --disable-nls
  log "make bash"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS" bash
}

run_recipe "$@"
