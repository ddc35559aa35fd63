#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# zlib 1.2.13 (Debian's upstream tarball): the 15 objects of the static libz.a.
set -euo pipefail
RECIPE_NAME=zlib
RECIPE_SUMMARY="zlib 1.2.13 from 'apt-get source zlib': the static library's objects."
RECIPE_EXPECTED=15
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source zlib "zlib_1.2.13*.orig.tar.*"
}

recipe_build() {
  log "configure --static"
  # --static: only libz.a's objects, no PIC duplicates (*.lo) for libz.so.
  run_logged env CFLAGS="$MLGO_CFLAGS" ./configure --static
  log "make libz.a"
  run_make -j"$JOBS" libz.a
}

# The benchmark: zlib's own minigzip (test/minigzip.c) on generated mixed
# data: compression at levels 6 and 9, then decompression (docs/run-cost.md).
recipe_benchmark_link() {
  # shellcheck disable=SC2086  # MLGO_CFLAGS is a list of flags
  run_logged nice -n 10 "$CC" $MLGO_CFLAGS -I. -c test/minigzip.c -o test/minigzip.o
  run_logged "$CC" test/minigzip.o libz.a -o bench-zlib
}
recipe_benchmark_input() {
  local bytes=3000000
  [ "$2" = full ] || bytes=40000
  workload_file mixed "$bytes" 1 "$1/input"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-zlib" -c <input >input.6.gz
  bench_exec "$OBJDIR/bench-zlib" -9 -c <input >input.9.gz
  bench_exec "$OBJDIR/bench-zlib" -d -c <input.6.gz | cksum
  cksum <input.6.gz
  cksum <input.9.gz
}

run_recipe "$@"
