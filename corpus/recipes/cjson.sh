#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# cJSON 1.7.15 (Debian's upstream tarball, C): the static JSON parser and
# its utilities (JSON Pointer, Patch, Merge Patch), with the project's own
# compiler flags; no tests.
set -euo pipefail
RECIPE_NAME=cjson
RECIPE_SUMMARY="cJSON 1.7.15 from 'apt-get source cjson' (C): the static cJSON and cJSON_Utils objects."
RECIPE_EXPECTED=2
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source cjson "cjson_1.7.15.orig.tar.*"
}

recipe_build() {
  log "cmake (static libraries, no tests)"
  cmake_configure -DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=ON -DENABLE_TARGET_EXPORT=OFF
  log "make cjson cjson_utils"
  run_make -C _b -j"$JOBS" cjson cjson_utils
}

run_recipe "$@"
