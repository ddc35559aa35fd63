#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# MuJS 1.3.2 (Debian's upstream tarball of mujs, C): every source file of
# the embeddable ES5 JavaScript interpreter compiled on its own (the lexer,
# the recursive-descent parser, the bytecode compiler, the stack-based
# interpreter with its property lookup and the mark-and-sweep collector,
# the Object, Function, Array, String, Number, Boolean, Math, Date, JSON,
# RegExp and Error built-ins, David Gay's dtoa, its own backtracking regular
# expressions and UTF-8 tables) and the mujs shell's and mujs-pp's mains;
# not the one.c amalgamation the Makefile would make the library of, no
# readline.
set -euo pipefail
RECIPE_NAME=mujs
RECIPE_SUMMARY="MuJS 1.3.2 from 'apt-get source mujs' (C): the interpreter's source files and the mujs and mujs-pp mains, one object each."
RECIPE_EXPECTED=28
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source mujs "mujs_1.3.2.orig.tar.*"
}

recipe_build() {
  # The Makefile has no configure step. Its library is one object made from
  # one.c, which includes every source file; its pattern rule compiles each
  # file on its own instead: one module per file, as in the other corpora.
  # CFLAGS on the command line replaces the Makefile's -std=c99 -O2 and
  # -DHAVE_READLINE (readline would need libreadline-dev).
  local objects=() source
  for source in js*.c utf*.c regexp.c main.c pp.c; do
    objects+=("build/release/${source%.c}.o")
  done
  log "make ${#objects[@]} objects (no configure)"
  run_make -j"$JOBS" CC="$CC" AR="$AR" CFLAGS="$MLGO_CFLAGS" HAVE_READLINE=no "${objects[@]}"
}

run_recipe "$@"
