#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# yaml-cpp 0.7.0 (Debian's upstream tarball, pinned), C++: every object of the
# static libyaml-cpp.a as its CMake build makes it, contrib/ included (it is
# part of the library by default); no tests, no parse tools.
set -euo pipefail
RECIPE_NAME=yaml-cpp
RECIPE_SUMMARY="yaml-cpp 0.7.0 from 'apt-get source yaml-cpp=0.7.0+dfsg-8' (C++): the static library's objects."
RECIPE_EXPECTED=31
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source yaml-cpp=0.7.0+dfsg-8 "yaml-cpp_0.7.0*.orig.tar.xz"
}

recipe_build() {
  log "cmake (static library only)"
  cmake_configure -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
    -DYAML_CPP_BUILD_CONTRIB=ON -DYAML_CPP_INSTALL=OFF
  log "make yaml-cpp"
  run_make -C _b -j"$JOBS" yaml-cpp
}

# The benchmark: our driver (corpus/benchmarks/yaml-cpp/bench.cpp) with
# libyaml-cpp.a: a generated document parsed, walked, emitted and parsed
# again; the file "records" holds its size (docs/run-cost.md).
recipe_benchmark_link() {
  # shellcheck disable=SC2086  # MLGO_CXXFLAGS is a list of flags
  run_logged nice -n 10 "$CXX" -std=c++17 $MLGO_CXXFLAGS -Iinclude \
    -c "$BENCHMARKS_DIR/yaml-cpp/bench.cpp" -o bench-yaml-cpp.o
  run_logged nice -n 10 "$CXX" bench-yaml-cpp.o _b/libyaml-cpp.a -o bench-yaml-cpp
}
recipe_benchmark_input() {
  local records=400
  [ "$2" = full ] || records=20
  echo "$records" >"$1/records"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-yaml-cpp" records
}

run_recipe "$@"
