#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# SoundTouch 2.3.2 (Debian's upstream tarball of soundtouch, C++): every
# object of the static audio tempo, pitch and playback-rate library (time
# stretching by overlap-add, sample-rate transposition with anti-alias FIR
# filters, linear/cubic/Shannon interpolation, BPM detection, MMX and SSE
# kernels) and of the soundstretch program; float samples, no OpenMP.
set -euo pipefail
RECIPE_NAME=soundtouch
RECIPE_SUMMARY="SoundTouch 2.3.2 from 'apt-get source soundtouch' (C++): the static library's and the soundstretch program's objects."
RECIPE_EXPECTED=17
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source soundtouch "soundtouch_2.3.2+ds1.orig.tar.*"
}

recipe_build() {
  # The CMake project adds -Ofast (-O3 -ffast-math) to every target after
  # our flags; it is dropped so that ours alone choose the optimisation.
  run_logged sed -i 's/set(COMPILE_OPTIONS -Ofast)/set(COMPILE_OPTIONS)/' CMakeLists.txt
  if grep -q -- '-Ofast' CMakeLists.txt; then die "CMakeLists.txt still adds -Ofast"; fi
  log "cmake (static library and soundstretch, float samples, no OpenMP)"
  cmake_configure -DINTEGER_SAMPLES=OFF -DOPENMP=OFF -DSOUNDSTRETCH=ON -DSOUNDTOUCH_DLL=OFF
  log "make soundstretch"
  run_make -C _b -j"$JOBS" soundstretch
}

run_recipe "$@"
