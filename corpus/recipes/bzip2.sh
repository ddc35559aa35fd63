#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bzip2 1.0.8 (Debian's upstream tarball, pinned): the objects of libbz2.a and
# of the bzip2 and bzip2recover programs, as its Makefile builds them.
set -euo pipefail
RECIPE_NAME=bzip2
RECIPE_SUMMARY="bzip2 1.0.8 from 'apt-get source bzip2=1.0.8-5': libbz2.a, bzip2.c, bzip2recover.c."
RECIPE_EXPECTED=9
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source bzip2=1.0.8-5 "bzip2_1.0.8.orig.tar.*"
}

recipe_build() {
  # The Makefile's flags, with ours in place of -Wall -Winline -O2 -g. Only
  # objects: linking the programs adds nothing to the corpus.
  log "make libbz2.a bzip2.o bzip2recover.o"
  run_make -j"$JOBS" CC="$CC" AR="$AR" RANLIB="$RANLIB" \
    CFLAGS="$MLGO_CFLAGS -D_FILE_OFFSET_BITS=64" \
    libbz2.a bzip2.o bzip2recover.o
}

# The benchmark: the bzip2 program on generated mixed data, compressing and
# decompressing (docs/run-cost.md).
recipe_benchmark_link() {
  run_logged "$CC" bzip2.o libbz2.a -o bench-bzip2
}
recipe_benchmark_input() {
  local bytes=1500000
  [ "$2" = full ] || bytes=20000
  workload_file mixed "$bytes" 2 "$1/input"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-bzip2" -c <input >input.bz2
  bench_exec "$OBJDIR/bench-bzip2" -d -c <input.bz2 | cksum
  cksum <input.bz2
}

run_recipe "$@"
