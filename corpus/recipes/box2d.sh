#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Box2D 2.4.1 (Debian's upstream tarball, pinned), C++: every object of the
# static libbox2d.a (collision, common, dynamics, rope) as its CMake build makes
# it; no unit tests, no testbed (it needs OpenGL, GLFW and imgui).
set -euo pipefail
RECIPE_NAME=box2d
RECIPE_SUMMARY="Box2D 2.4.1 from 'apt-get source box2d=2.4.1-3' (C++): the static library's objects."
RECIPE_EXPECTED=45
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source box2d=2.4.1-3 "box2d_2.4.1.orig.tar.*"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure -DBOX2D_BUILD_UNIT_TESTS=OFF -DBOX2D_BUILD_TESTBED=OFF -DBOX2D_BUILD_DOCS=OFF
  log "make box2d"
  run_make -C _b -j"$JOBS" box2d
}

run_recipe "$@"
