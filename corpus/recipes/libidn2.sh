#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GNU Libidn2 2.3.3 (Debian's upstream tarball of libidn2, C): every object of
# the static library for internationalised domain names (IDNA2008 lookup
# and registration, the UTS #46 mapping, the Punycode encoder and decoder,
# the bidi, contextual (CONTEXTJ/CONTEXTO) and code-point property rules
# over its generated tables, the IDNA2003-compatible to-ASCII/to-Unicode
# API, error strings), of the libunistring subset it bundles (UTF-8 and
# UTF-32 conversion, NFC and NFD normalisation with their decomposition
# and composition tables, combining classes, the general-category,
# bidi-class, joining-type and script tables, iconv-based string
# conversion), of its gnulib library and of the idn2 program with its
# shipped gengetopt parser; not the machine's libunistring, no
# native-language support, docs, examples or tests.
set -euo pipefail
RECIPE_NAME=libidn2
RECIPE_SUMMARY="GNU Libidn2 2.3.3 from 'apt-get source libidn2' (C): the static library's, its bundled libunistring's and gnulib's and the idn2 program's objects."
RECIPE_EXPECTED=72
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libidn2 "libidn2_2.3.3.orig.tar.gz" # not its .asc
}

recipe_build() {
  # A libunistring on the machine would replace the bundled one: the cache
  # variable says there is none, so that every machine builds the same.
  log "configure --disable-shared --disable-nls --disable-doc (bundled libunistring; CFLAGS=-O0, about a minute)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS=-O0 AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --disable-nls --disable-doc \
    --disable-valgrind-tests ac_cv_libunistring=no
  # The top level would also enter examples, tests, fuzz and po.
  log "make -C gl; make -C unistring; make -C lib; make -C src"
  local dir
  for dir in gl unistring lib src; do
    run_make -C "$dir" -j"$JOBS" CFLAGS="$MLGO_CFLAGS"
  done
}

run_recipe "$@"
