#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# zstd 1.5.4 (Debian's upstream tarball, pinned): every module of the static,
# multi-threaded libzstd.a, with the legacy formats from v0.1 and the
# deprecated zbuff API, and without the x86-64 assembly decoder (assembly has
# no bitcode; the C decoder loop takes its place).
set -euo pipefail
RECIPE_NAME=zstd
RECIPE_SUMMARY="zstd 1.5.4 from 'apt-get source libzstd=1.5.4+dfsg2-5': the static library's objects."
RECIPE_EXPECTED=39
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source libzstd=1.5.4+dfsg2-5 "libzstd_1.5.4*.orig.tar.xz"
}

recipe_build() {
  # CFLAGS on the command line replaces the Makefile's -O3 and warning flags;
  # its CPPFLAGS (include paths, XXH_NAMESPACE, ZSTD_MULTITHREAD, ...) stay.
  # BUILD_DIR gives the objects (and so the module names) a fixed place,
  # lib/obj/static/, instead of lib/obj/conf_<hash of the flags>/static/.
  log "make -C lib libzstd.a-mt"
  run_make -C lib -j"$JOBS" \
    CC="$CC" AR="$AR" CFLAGS="$MLGO_CFLAGS" BUILD_DIR=obj \
    ZSTD_NO_ASM=1 ZSTD_LEGACY_SUPPORT=1 ZSTD_LIB_DEPRECATED=1 \
    libzstd.a-mt
}

# The benchmark: our driver (corpus/benchmarks/zstd/bench.c) with libzstd.a,
# compressing generated mixed data at levels 3 and 9 and decompressing it
# again (docs/run-cost.md).
recipe_benchmark_link() {
  # shellcheck disable=SC2086  # MLGO_CFLAGS is a list of flags
  run_logged nice -n 10 "$CC" -std=c99 $MLGO_CFLAGS -I"$BENCHMARKS_DIR" -Ilib \
    -c "$BENCHMARKS_DIR/zstd/bench.c" -o bench-zstd.o
  # libzstd.a-mt is built with ZSTD_MULTITHREAD: it needs -lpthread.
  run_logged nice -n 10 "$CC" bench-zstd.o lib/libzstd.a -lpthread -o bench-zstd
}
recipe_benchmark_input() {
  local bytes=2000000
  [ "$2" = full ] || bytes=50000
  workload_file mixed "$bytes" 5 "$1/input"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-zstd" input
}

run_recipe "$@"
