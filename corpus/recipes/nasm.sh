#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# NASM 2.16.01 (Debian's upstream tarball): the assembler and disassembler
# (nasm, ndisasm) with their shared library, from configure/make.
set -euo pipefail
RECIPE_NAME=nasm
RECIPE_SUMMARY="NASM 2.16.01 from 'apt-get source nasm': the nasm and ndisasm programs' objects."
RECIPE_EXPECTED=84
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source nasm "nasm_2.16.01.orig.tar.*"
}

recipe_build() {
  log "configure (CFLAGS=-O0 for its test compiles)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" RANLIB="$RANLIB"
  log "make nasm ndisasm"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS" nasm ndisasm
}

run_recipe "$@"
