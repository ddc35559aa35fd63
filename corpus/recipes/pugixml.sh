#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# pugixml 1.13 (Debian's upstream tarball, C++): the static XML parser
# library's one object (DOM, XPath), in its default configuration.
set -euo pipefail
RECIPE_NAME=pugixml
RECIPE_SUMMARY="pugixml 1.13 from 'apt-get source pugixml' (C++): the static library's object."
RECIPE_EXPECTED=1
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source pugixml "pugixml_1.13.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only, no tests)"
  cmake_configure -DPUGIXML_BUILD_TESTS=OFF
  log "make pugixml-static"
  run_make -C _b -j"$JOBS" pugixml-static
}

run_recipe "$@"
