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

# The benchmark: our driver (corpus/benchmarks/box2d/bench.cpp) with
# libbox2d.a, simulating a pyramid of boxes, a jointed chain and falling
# circles and triangles; the file "params" holds the scene's rows, the
# number of falling bodies and the steps (docs/run-cost.md).
recipe_benchmark_link() {
  # shellcheck disable=SC2086  # MLGO_CXXFLAGS is a list of flags
  run_logged nice -n 10 "$CXX" -std=c++17 $MLGO_CXXFLAGS -Iinclude \
    -c "$BENCHMARKS_DIR/box2d/bench.cpp" -o bench-box2d.o
  run_logged nice -n 10 "$CXX" bench-box2d.o _b/bin/libbox2d.a -lm -o bench-box2d
}
recipe_benchmark_input() {
  if [ "$2" = full ]; then echo "20 80 300" >"$1/params"; else echo "5 5 20" >"$1/params"; fi
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-box2d" params
}

run_recipe "$@"
