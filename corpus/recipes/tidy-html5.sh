#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# HTML Tidy 5.6.0 (Debian's upstream tarball of tidy-html5, C): every object
# of the static libtidy (HTML lexer and parser, document cleaner, pretty
# printer, accessibility checks, character encodings, the translated message
# tables) and of the tidy program; no shared library or samples.
set -euo pipefail
RECIPE_NAME=tidy-html5
RECIPE_SUMMARY="HTML Tidy 5.6.0 from 'apt-get source tidy-html5' (C): the static libtidy's and the tidy program's objects."
RECIPE_EXPECTED=27
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source tidy-html5 "tidy-html5_5.6.0.orig.tar.*"
}

recipe_build() {
  log "cmake (static library and the tidy program)"
  cmake_configure -DBUILD_SHARED_LIB=OFF -DBUILD_TAB2SPACE=OFF -DBUILD_SAMPLE_CODE=OFF
  log "make tidy"
  run_make -C _b -j"$JOBS" tidy
}

run_recipe "$@"
