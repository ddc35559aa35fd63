#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# jq 1.6 (Debian's upstream tarball, C): every object of the library and the
# command-line JSON processor, without Oniguruma (no regular expressions).
set -euo pipefail
RECIPE_NAME=jq
RECIPE_SUMMARY="jq 1.6 from 'apt-get source jq' (C): the library's and the tool's objects."
RECIPE_EXPECTED=19
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source jq "jq_1.6.orig.tar.*"
}

recipe_build() {
  # The upstream tarball is a git archive: no configure script yet.
  log "autoreconf"
  run_logged autoreconf -fi
  gnu_configure_make --disable-shared --enable-static --without-oniguruma --disable-docs \
    --disable-maintainer-mode
}

run_recipe "$@"
