#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# libgsm 1.0.22 (Debian's upstream tarball of libgsm, C): every object of the
# static GSM 06.10 full-rate speech codec library (preprocessing, LPC
# analysis and the short-term filters, long-term prediction, regular-pulse
# excitation, the fixed-point arithmetic with its signed-shift assumption,
# frame packing and unpacking, WAV #49 framing, the debugging printers) and
# of the toast program (untoast and tcat are links to it) with its linear,
# u-law, A-law and Sun audio converters; not the test and tool programs.
set -euo pipefail
RECIPE_NAME=libgsm
RECIPE_SUMMARY="libgsm 1.0.22 from 'apt-get source libgsm' (C): the static library's and the toast program's objects."
RECIPE_EXPECTED=23
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libgsm "libgsm_1.0.22.orig.tar.*"
}

recipe_build() {
  # A hand-written Makefile, no configure: its CFLAGS are made of CCFLAGS
  # (-c -O2 and the prototypes switch, replaced here) and the options it
  # keeps (-DSASR -DWAV49 -I./inc); CC replaces its `gcc -ansi -pedantic`.
  log "make (no configure)"
  run_make -j"$JOBS" CC="$CC" AR="$AR" RANLIB="$RANLIB" \
    CCFLAGS="-c $MLGO_CFLAGS -DNeedFunctionPrototypes=1"
}

run_recipe "$@"
