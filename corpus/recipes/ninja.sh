#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Ninja 1.11.1 (Debian's upstream tarball, pinned), C++: every object of the
# ninja executable as its CMake build makes it (libninja, the lexers, browse
# mode, main); no tests or perf tests.
set -euo pipefail
RECIPE_NAME=ninja
RECIPE_SUMMARY="Ninja 1.11.1 from 'apt-get source ninja-build=1.11.1-2~deb12u1' (C++): the objects of the ninja program."
RECIPE_EXPECTED=29
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source ninja-build=1.11.1-2~deb12u1 "ninja-build_1.11.1.orig.tar.*"
}

recipe_build() {
  # RE2C=OFF: use the lexers the tarball ships (src/lexer.cc,
  # src/depfile_parser.cc) even where re2c is installed, so the modules do not
  # depend on the host's re2c (an OFF value is "found", so CMake does not look).
  log "cmake (no tests)"
  cmake_configure -DRE2C=OFF
  log "make ninja"
  run_make -C _b -j"$JOBS" ninja
}

# The benchmark: ninja on a generated build graph (corpus/benchmarks/ninja/
# graph.py): loading the manifest, then a dry run that plans every edge, and
# two queries (docs/run-cost.md).
recipe_benchmark_link() {
  run_logged cp _b/ninja bench-ninja
}
recipe_benchmark_input() {
  local targets=6000
  [ "$2" = full ] || targets=150
  python3 "$BENCHMARKS_DIR/ninja/graph.py" "$targets" "$1"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-ninja" -n -j1 | cksum
  bench_exec "$OBJDIR/bench-ninja" -t commands | cksum
  bench_exec "$OBJDIR/bench-ninja" -t query app | cksum
}

run_recipe "$@"
