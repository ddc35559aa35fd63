#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libxml2 2.9.14 (Debian's upstream tarball): the static library and the
# xmllint program, from configure/make; no Python, ICU, lzma or readline.
set -euo pipefail
RECIPE_NAME=libxml2
RECIPE_SUMMARY="libxml2 2.9.14 from 'apt-get source libxml2': the static library and xmllint."
RECIPE_EXPECTED=45
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libxml2 "libxml2_2.9.14*.orig.tar.*"
}

recipe_build() {
  log "configure --disable-shared"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS="$MLGO_CFLAGS" AR="$AR" NM="$NM" \
    RANLIB="$RANLIB" --disable-shared --disable-dependency-tracking --without-python \
    --without-icu --without-lzma --without-readline --without-history
  log "make libxml2.la xmllint"
  run_make -j"$JOBS" libxml2.la xmllint
}

run_recipe "$@"
