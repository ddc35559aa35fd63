#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU findutils 4.9.0 (Debian's upstream tarball): the programs (find,
# xargs, locate, frcode) and gnulib's library, from configure/make; no NLS.
# configure runs at -O0 (its test compiles are faster).
set -euo pipefail
RECIPE_NAME=findutils
RECIPE_SUMMARY="GNU findutils 4.9.0 from 'apt-get source findutils': find, xargs, locate, updatedb's helpers and gnulib."
RECIPE_EXPECTED=171
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source findutils "findutils_4.9.0.orig.tar.xz"
}

recipe_build() {
  gnu_configure_make --disable-nls
}

run_recipe "$@"
