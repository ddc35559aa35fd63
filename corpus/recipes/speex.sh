#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Speex 1.2.1 (Debian's upstream tarball, C): every object of the static
# speech codec library (no command-line tools, which need Ogg).
set -euo pipefail
RECIPE_NAME=speex
RECIPE_SUMMARY="Speex 1.2.1 from 'apt-get source speex' (C): the static codec library's objects."
RECIPE_EXPECTED=30
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source speex "speex_1.2.1.orig.tar.gz"
}

recipe_build() {
  gnu_configure_make --disable-shared --enable-static --disable-binaries
}

run_recipe "$@"
