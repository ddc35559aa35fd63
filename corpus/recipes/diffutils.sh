#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU diffutils 3.8 (Debian's upstream tarball): the programs (diff, cmp,
# diff3, sdiff) and gnulib's library, from configure/make; no NLS.
# configure runs at -O0 (its test compiles are faster).
set -euo pipefail
RECIPE_NAME=diffutils
RECIPE_SUMMARY="GNU diffutils 3.8 from 'apt-get source diffutils': diff, cmp, diff3, sdiff and gnulib."
RECIPE_EXPECTED=122
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source diffutils "diffutils_3.8.orig.tar.xz"
}

recipe_build() {
  gnu_configure_make --disable-nls
}

run_recipe "$@"
