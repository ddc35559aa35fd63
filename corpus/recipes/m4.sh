#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU M4 1.4.19 (Debian's upstream tarball of m4, C): every object of the m4
# macro processor (the input stack and tokeniser, macro expansion with its
# argument collection, the symbol table, the built-in macros with eval's
# expression parser, format, regexp and patsubst, diversions and output,
# frozen state files, the include path, debugging and tracing) and of its
# gnulib library (libm4: GNU regex, the stack-overflow handler over the
# sigsegv module, clean-temp and tmpdir, the spawn-pipe and wait-process
# helpers, quoting, the gl_list and hash containers, vasnprintf,
# obstacks, xalloc); no native-language support, no docs, examples or
# tests (not the gnulib tests).
set -euo pipefail
RECIPE_NAME="m4"
RECIPE_SUMMARY="GNU M4 1.4.19 from 'apt-get source m4' (C): the m4 program's and its gnulib library's objects."
RECIPE_EXPECTED=138
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source m4 "m4_1.4.19.orig.tar.xz" # not its .asc
}

recipe_build() {
  # Stack overflow is detected by gnulib's own sigsegv module, not by a
  # libsigsegv the machine may have.
  log "configure --disable-nls --without-libsigsegv (CFLAGS=-O0, about a minute)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-dependency-tracking --disable-nls --without-libsigsegv
  # The top level would also enter examples, doc, checks, po and tests
  # (hundreds of gnulib test programs).
  log "make -C lib; make -C src"
  run_make -C lib -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  run_make -C src -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
}

run_recipe "$@"
