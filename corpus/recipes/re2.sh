#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# RE2 2022-06-01 (Debian's upstream tarball, C++): every object of the static
# regular-expression library (parser, compiler, NFA, DFA, one-pass and
# bit-state matchers, prefilters, Unicode tables); no tests or benchmarks.
# Debian's tarball leaves out the three generated table sources; they are made
# again as Debian's build makes them, by upstream's scripts from Debian's
# Unicode 15.0 data (unicode-data and python3-six, both pulled in by
# python3-matplotlib, which scripts/setup.sh installs).
set -euo pipefail
RECIPE_NAME=re2
RECIPE_SUMMARY="RE2 2022-06-01 from 'apt-get source re2' (C++): the static library's objects."
RECIPE_EXPECTED=22
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source re2 "re2_20220601+dfsg.orig.tar.*"
}

# write_output FILE COMMAND...: runs COMMAND with its standard output in FILE.
write_output() {
  local file="$1"
  shift
  "$@" >"$file"
}

recipe_build() {
  [ -f /usr/share/unicode/UnicodeData.txt ] ||
    die "/usr/share/unicode/UnicodeData.txt not found: install unicode-data"
  python3 -c 'import six' 2>/dev/null || die "python3 has no module six: install python3-six"
  log "generate re2/perl_groups.cc, re2/unicode_casefold.cc, re2/unicode_groups.cc"
  # Debian's patch: the local Unicode data instead of unicode.org's.
  run_logged sed -i 's|^_UNICODE_DIR = .*|_UNICODE_DIR = "/usr/share/unicode"|' re2/unicode.py
  run_logged write_output re2/perl_groups.cc perl re2/make_perl_groups.pl
  run_logged write_output re2/unicode_casefold.cc python3 re2/make_unicode_casefold.py
  run_logged write_output re2/unicode_groups.cc python3 re2/make_unicode_groups.py
  log "cmake (static library only, no tests or benchmarks)"
  cmake_configure -DRE2_BUILD_TESTING=OFF
  log "make re2"
  run_make -C _b -j"$JOBS" re2
}

run_recipe "$@"
