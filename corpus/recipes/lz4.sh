#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# lz4 1.9.4 (Debian's upstream tarball): the library's objects (lz4, lz4hc,
# lz4frame, lz4file, xxhash) and the lz4 program's, as programs/Makefile
# builds the lz4 command-line tool.
set -euo pipefail
RECIPE_NAME=lz4
RECIPE_SUMMARY="lz4 1.9.4 from 'apt-get source lz4': lib/*.c and programs/*.c of the lz4 tool."
RECIPE_EXPECTED=9
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lz4 "lz4_1.9.4*.orig.tar.*"
}

recipe_build() {
  # Our flags in place of the Makefile's -O3 (its warnings stay: -w silences
  # them); MOREFLAGS empty.
  log "make -C programs lz4"
  run_make -C programs -j"$JOBS" CC="$CC" CFLAGS="$MLGO_CFLAGS" lz4
}

# The benchmark: the lz4 program on generated mixed data: fast and high
# compression, then decompression (docs/run-cost.md).
recipe_benchmark_link() {
  run_logged cp programs/lz4 bench-lz4
}
recipe_benchmark_input() {
  local bytes=8000000
  [ "$2" = full ] || bytes=100000
  workload_file mixed "$bytes" 3 "$1/input"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-lz4" -q -1 -c <input >input.1.lz4
  bench_exec "$OBJDIR/bench-lz4" -q -9 -c <input >input.9.lz4
  bench_exec "$OBJDIR/bench-lz4" -q -d -c <input.9.lz4 | cksum
  cksum <input.1.lz4
  cksum <input.9.lz4
}

run_recipe "$@"
