#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# BusyBox 1.35.0 (Debian's upstream tarball), default configuration: every
# applet and library object. Host tools (kconfig, fixdep, applet tables) are
# built with gcc and deleted afterwards; the per-directory built-in.o files,
# which merge the objects of a directory with `ld -r`, are deleted too so that
# every module has exactly one object.
set -euo pipefail
RECIPE_NAME=busybox
RECIPE_SUMMARY="BusyBox 1.35.0 from 'apt-get source busybox', defconfig: applet and library objects."
RECIPE_EXPECTED=565
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source busybox "busybox_1.35.0.orig.tar.*"
}

BUSYBOX_MAKE_VARS=()

recipe_build() {
  # EXTRA_CFLAGS follows the Makefile's -Os, so -Oz wins.
  BUSYBOX_MAKE_VARS=(CC="$CC" AR="$AR" NM="$NM" HOSTCC=gcc EXTRA_CFLAGS="$MLGO_CFLAGS")
  log "make defconfig"
  run_make "${BUSYBOX_MAKE_VARS[@]}" defconfig
  log "make -j$JOBS (a few minutes)"
  run_make -j"$JOBS" "${BUSYBOX_MAKE_VARS[@]}"
}

recipe_prune() {
  local merged
  merged="$(find . -name built-in.o | wc -l)"
  log "deleting $merged built-in.o files (ld -r merges of other objects)"
  find . -name built-in.o -delete
}

run_recipe "$@"
