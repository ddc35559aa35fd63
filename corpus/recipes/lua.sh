#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Lua 5.4.4 (Debian's upstream tarball, so Debian's shared-library patches play
# no part): the core and standard-library objects of liblua.a, lua.o and luac.o.
set -euo pipefail
RECIPE_NAME=lua
RECIPE_SUMMARY="Lua 5.4.4 from 'apt-get source lua5.4' (the .orig.tar.gz): liblua.a, lua.c, luac.c."
RECIPE_EXPECTED=34
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_apt_source lua5.4 "lua5.4_5.4.4.orig.tar.*"
}

recipe_build() {
  # The flags of `make linux-noreadline`, with ours in place of -O2 -Wall -Wextra.
  # Only objects: linking the interpreters adds nothing to the corpus.
  # A benchmark build fixes Lua's string-hash seed (lstate.c lets luaconf
  # define luai_makeseed): the default mixes in time(NULL), so the tables'
  # layout, and with it the instruction count, changed from run to run by
  # 1.5 % under cachegrind.
  local seed=""
  [ -z "$BENCHMARK_BUILD" ] || seed="'-Dluai_makeseed(L)=0x2a'"  # quoted for make's shell
  log "make liblua.a lua.o luac.o"
  run_make -C src -j"$JOBS" \
    CC="$CC -std=gnu99" \
    CFLAGS="$MLGO_CFLAGS -DLUA_COMPAT_5_3 -DLUA_USE_LINUX $seed" \
    AR="$AR rcu" RANLIB="$RANLIB" \
    liblua.a lua.o luac.o
}

# The benchmark: the interpreter (lua.o with liblua.a) running our script
# set, corpus/benchmarks/lua/bench.lua (docs/run-cost.md).
recipe_benchmark_link() {
  run_logged "$CC" -o bench-lua src/lua.o src/liblua.a -lm -ldl
}
recipe_benchmark_input() {
  cp "$BENCHMARKS_DIR/lua/bench.lua" "$1/bench.lua"
  if [ "$2" = full ]; then echo 20 >"$1/scale"; else echo 1 >"$1/scale"; fi
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-lua" bench.lua "$(cat scale)"
}

run_recipe "$@"
