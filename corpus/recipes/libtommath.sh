#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# LibTomMath 1.2.0 (Debian's upstream tarball of libtommath, C): every object
# of the static multiple-precision integer library (one small file per
# function: arithmetic, Karatsuba and Toom-Cook multiplication, modular
# exponentiation, Montgomery and diminished-radix reduction, primality
# tests); no demo or timing programs.
set -euo pipefail
RECIPE_NAME=libtommath
RECIPE_SUMMARY="LibTomMath 1.2.0 from 'apt-get source libtommath' (C): the static library's objects."
RECIPE_EXPECTED=157
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libtommath "libtommath_1.2.0.orig.tar.xz" # not its .asc
}

recipe_build() {
  # IGNORE_SPEED drops the makefile's -O3 -funroll-loops -fomit-frame-pointer:
  # our flags (CFLAGS, appended last) alone choose the optimisation.
  log "make libtommath.a"
  run_make -j"$JOBS" CC="$CC" AR="$AR" RANLIB="$RANLIB" CFLAGS="$MLGO_CFLAGS" IGNORE_SPEED=1 \
    libtommath.a
}

run_recipe "$@"
