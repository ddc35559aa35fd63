#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# LAME 3.100 (Debian's upstream tarball of lame, C): every object of the
# static MP3 encoder library libmp3lame (with its SSE quantiser helpers and
# the mpglib decoder) and of the lame program; no shared library, no GTK
# frame analyser, no termcap (the program's bitrate histogram stays plain
# text on every machine), no libsndfile (LAME's own WAV/AIFF reader).
set -euo pipefail
RECIPE_NAME=lame
RECIPE_SUMMARY="LAME 3.100 from 'apt-get source lame' (C): the static libmp3lame's and the lame program's objects."
RECIPE_EXPECTED=37
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lame "lame_3.100.orig.tar.*"
}

recipe_build() {
  # The cache variables switch termcap/curses off whether or not the machine
  # has them; no nasm (its objects would carry no bitcode).
  log "configure --disable-shared (CFLAGS=-O0, no termcap, no nasm)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    ac_cv_header_termcap_h=no ac_cv_header_ncurses_termcap_h=no \
    ac_cv_lib_termcap_initscr=no ac_cv_lib_curses_initscr=no ac_cv_lib_ncurses_initscr=no \
    --disable-shared --disable-dependency-tracking --disable-nasm --disable-gtktest \
    --disable-mp3x --disable-mp3rtp --with-fileio=lame
  log "make"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
