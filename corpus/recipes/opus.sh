#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Opus 1.3.1 (Debian's upstream tarball): every object of the static libopus
# (CELT, SILK, floating-point, with the run-time-selected SSE files), from
# configure/make; no extra programs or docs.
set -euo pipefail
RECIPE_NAME=opus
RECIPE_SUMMARY="Opus 1.3.1 from 'apt-get source opus': the static libopus (CELT, SILK, floating point)."
RECIPE_EXPECTED=148
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source opus "opus_1.3.1.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS="$MLGO_CFLAGS" AR="$AR" NM="$NM" \
    RANLIB="$RANLIB" --disable-shared --disable-dependency-tracking --disable-doc \
    --disable-extra-programs
  log "make libopus.la"
  run_make -j"$JOBS" libopus.la
}

run_recipe "$@"
