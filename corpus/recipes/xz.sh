#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# XZ Utils 5.4.1 (Debian's upstream tarball, pinned): every object of the
# static liblzma as its configure/make build makes it (all filters, encoders
# and decoders, multi-threaded); no xz, xzdec or scripts.
set -euo pipefail
RECIPE_NAME=xz
RECIPE_SUMMARY="XZ Utils 5.4.1 from 'apt-get source xz-utils=5.4.1-1+deb12u2': the static liblzma's objects."
RECIPE_EXPECTED=80
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source xz-utils=5.4.1-1+deb12u2 "xz-utils_5.4.1.orig.tar.*"
}

recipe_build() {
  # --disable-shared: libtool then compiles every source once (no PIC copies
  # for liblzma.so). configure keeps our CFLAGS as they are (no -O2 added).
  log "configure --disable-shared (liblzma only)"
  run_logged nice -n 10 ./configure CC="$CC" CFLAGS="$MLGO_CFLAGS" \
    AR="$AR" NM="$NM" RANLIB="$RANLIB" \
    --disable-shared --disable-dependency-tracking --disable-nls \
    --disable-xz --disable-xzdec --disable-lzmadec --disable-lzmainfo \
    --disable-lzma-links --disable-scripts --disable-doc
  log "make -C src/liblzma liblzma.la"
  run_make -C src/liblzma -j"$JOBS" liblzma.la
}

# The benchmark: our driver (corpus/benchmarks/xz/bench.c) with liblzma.a,
# compressing generated mixed data at presets 1 and 6 and decompressing it
# again (docs/run-cost.md).
recipe_benchmark_link() {
  # shellcheck disable=SC2086  # MLGO_CFLAGS is a list of flags
  run_logged nice -n 10 "$CC" -std=c99 $MLGO_CFLAGS -I"$BENCHMARKS_DIR" -Isrc/liblzma/api \
    -c "$BENCHMARKS_DIR/xz/bench.c" -o bench-xz.o
  # liblzma is multi-threaded (MYTHREAD_POSIX): it needs -lpthread.
  run_logged nice -n 10 "$CC" bench-xz.o src/liblzma/.libs/liblzma.a -lpthread -o bench-xz
}
recipe_benchmark_input() {
  local bytes=250000
  [ "$2" = full ] || bytes=10000
  workload_file mixed "$bytes" 4 "$1/input"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-xz" input
}

run_recipe "$@"
