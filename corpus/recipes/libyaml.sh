#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libyaml 0.2.5 (Debian's upstream tarball): every object of the static
# YAML parser and emitter library.
set -euo pipefail
RECIPE_NAME=libyaml
RECIPE_SUMMARY="libyaml 0.2.5 from 'apt-get source libyaml': the static library's objects."
RECIPE_EXPECTED=8
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libyaml "libyaml_0.2.5.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure
  log "make yaml"
  run_make -C _b -j"$JOBS" yaml
}

run_recipe "$@"
