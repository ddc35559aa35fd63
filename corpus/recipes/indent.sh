#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU indent 2.2.12 (Debian's upstream tarball of indent, C): every object of
# the indent program, a C source formatter (the lexer with the shipped
# gperf keyword tables of C and C++, the token handlers and the parse
# stack of statement nesting, comment formatting and filling, line
# breaking and output buffering, the option table and profile files, the
# backup-file naming, file I/O); no native-language support, no docs or
# regression tests.
set -euo pipefail
RECIPE_NAME=indent
RECIPE_SUMMARY="GNU indent 2.2.12 from 'apt-get source indent' (C): the indent program's objects."
RECIPE_EXPECTED=11
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source indent "indent_2.2.12.orig.tar.xz"
}

recipe_build() {
  # indent.c includes <locale.h> for setlocale only #ifdef HAVE_LOCALE_H,
  # which configure never defines (with native-language support glibc's
  # <libintl.h> includes it, but only when optimising): CPPFLAGS does.
  log "configure --disable-nls CPPFLAGS=-DHAVE_LOCALE_H (CFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 CPPFLAGS=-DHAVE_LOCALE_H \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" --disable-dependency-tracking --disable-nls
  # The top level would also enter intl, doc (makeinfo), po, man and
  # regression. The Makefile's -Werror is overridden by our -w.
  log "make -C src"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
