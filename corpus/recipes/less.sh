#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# less 590 (Debian's upstream tarball, C): every object of the less pager
# (file and pipe buffering, line and ANSI-escape formatting, searching and
# highlighting, tags, marks, the option table, the terminal layer over
# ncurses' termcap interface, Unicode width and composing tables) and of
# lesskey and lessecho; POSIX regular expressions from the C library (not
# PCRE2, whatever the machine has).
set -euo pipefail
RECIPE_NAME=less
RECIPE_SUMMARY="less 590 from 'apt-get source less' (C): the less, lesskey and lessecho programs' objects."
RECIPE_EXPECTED=37
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source less "less_590.orig.tar.gz" # not its .asc
}

recipe_build() {
  # The terminal library is looked for only to link less (libncurses-dev,
  # scripts/setup.sh); the regular expressions are chosen by hand.
  log "configure --with-regex=posix (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 --with-regex=posix
  log "make"
  run_make -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
