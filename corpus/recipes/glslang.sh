#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# glslang 12.0.0 (Debian's upstream tarball, pinned), C++: every object of the
# static libraries its CMake build makes (glslang with the HLSL front end,
# OSDependent, OGLCompiler, SPIRV, SPVRemapper); no glslangValidator, no
# tests, and without SPIRV-Tools (not in the tarball; its optimiser is optional).
set -euo pipefail
RECIPE_NAME=glslang
RECIPE_SUMMARY="glslang 12.0.0 from 'apt-get source glslang=12.0.0-2' (C++): the static libraries' objects."
RECIPE_EXPECTED=52
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source glslang=12.0.0-2 "glslang_12.0.0.orig.tar.*"
}

recipe_build() {
  # ENABLE_PCH=OFF: every object is compiled from its own source, as a corpus
  # module must be, not from a precompiled header.
  log "cmake (libraries only)"
  cmake_configure -DBUILD_EXTERNAL=OFF -DENABLE_OPT=OFF -DENABLE_PCH=OFF \
    -DENABLE_GLSLANG_BINARIES=OFF -DENABLE_CTEST=OFF -DSKIP_GLSLANG_INSTALL=ON
  log "make -j$JOBS (a few minutes)"
  run_make -C _b -j"$JOBS"
}

run_recipe "$@"
