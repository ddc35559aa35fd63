#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# uchardet 0.0.7 (Debian's upstream tarball of uchardet, C++): every object of
# the static text-encoding detection library (Mozilla's universal charset
# detector: the escape-sequence, multi-byte and single-byte prober groups,
# the coding state machines of ISO-2022, HZ, UTF-8, Big5, EUC-JP/KR/TW, GB18030
# and Shift_JIS, character-distribution and Japanese context analysis, the
# Hebrew logical/visual and Latin-1 probers, the byte-pair language models
# of 29 languages) and of the uchardet program; no tests.
set -euo pipefail
RECIPE_NAME=uchardet
RECIPE_SUMMARY="uchardet 0.0.7 from 'apt-get source uchardet' (C++): the static library's and the uchardet program's objects."
RECIPE_EXPECTED=50
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source uchardet "uchardet_0.0.7.orig.tar.*"
}

recipe_build() {
  # The project asks for CMake 2.8.5, which CMake 4 refuses without a policy
  # minimum (older CMake ignores the variable). It adds -msse2 -mfpmath=sse
  # on x86 (the x86-64 default anyway).
  log "cmake (static library and the uchardet program)"
  cmake_configure -DBUILD_BINARY=ON -DBUILD_STATIC=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  log "make libuchardet uchardet"
  run_make -C _b -j"$JOBS" libuchardet uchardet
}

run_recipe "$@"
