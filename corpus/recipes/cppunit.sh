#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# CppUnit 1.15.1 (Debian's upstream tarball of cppunit, C++): every object of
# the static unit-testing framework library (test cases, suites, fixtures,
# decorators and the repeated and set-up tests, the factory registry and
# its suite builders, the assertion helpers and their messages, the
# protector chain that turns exceptions into failures, result collection
# and progress listeners, the text, compiler-style and XML outputters with
# its small XML document model, test paths and naming, the runners, the
# plug-in manager with the Unix dynamic-library loader; the Win32 and
# HP-UX loaders compile to empty objects) and of the DllPlugInTester
# program; no examples, docs or tests.
set -euo pipefail
RECIPE_NAME=cppunit
RECIPE_SUMMARY="CppUnit 1.15.1 from 'apt-get source cppunit' (C++): the static library's and the DllPlugInTester program's objects."
RECIPE_EXPECTED=50
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source cppunit "cppunit_1.15.1.orig.tar.*"
}

recipe_build() {
  # configure appends -Werror -Wall -Wextra -pedantic to CXXFLAGS, which our
  # CXXFLAGS on the make command line replace.
  log "configure --disable-shared --disable-werror --disable-doxygen (CXXFLAGS=-O0)"
  run_logged nice -n 10 ./configure CC="$CC" CXX="$CXX" CFLAGS=-O0 CXXFLAGS=-O0 \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" --disable-shared --disable-dependency-tracking \
    --disable-werror --disable-doxygen
  # The top level would also enter include, examples and doc.
  log "make -C src (about a minute)"
  run_make -C src -j"$JOBS" CXXFLAGS="$MLGO_CXXFLAGS"
}

run_recipe "$@"
