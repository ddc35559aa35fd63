#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# SQLite 3.53 amalgamation as better-sqlite3 12.11.1 ships and compiles it:
# one module (sqlite3.c, thousands of functions) with better-sqlite3's
# compile-time options (deps/defines.gypi) and its -std=c99.
set -euo pipefail
RECIPE_NAME=sqlite
RECIPE_SUMMARY="SQLite 3.53 from 'npm pack better-sqlite3@12.11.1': deps/sqlite3/sqlite3.c, one module."
RECIPE_EXPECTED=1
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

recipe_fetch() {
  fetch_npm better-sqlite3@12.11.1
}

# Prints better-sqlite3's SQLite options as -D flags, one a line.
gyp_defines() {
  python3 - "$1" <<'PY'
import ast, sys
text = "".join(l for l in open(sys.argv[1]) if not l.lstrip().startswith("#"))
for define in ast.literal_eval(text)["defines"]:
    print("-D" + define)
PY
}

recipe_build() {
  local defines=()
  mapfile -t defines < <(gyp_defines deps/defines.gypi)
  [ "${#defines[@]}" -gt 0 ] || die "no defines in deps/defines.gypi"
  log "compile deps/sqlite3/sqlite3.c (${#defines[@]} options from deps/defines.gypi)"
  # shellcheck disable=SC2086  # MLGO_CFLAGS is a list of flags
  run_logged nice -n 10 "$CC" -std=c99 $MLGO_CFLAGS "${defines[@]}" \
    -c deps/sqlite3/sqlite3.c -o deps/sqlite3/sqlite3.o
}

# The benchmark: our driver (corpus/benchmarks/sqlite/bench.c) with
# sqlite3.o: an in-memory database filled, indexed and queried; the file
# "orders" holds the number of rows (docs/run-cost.md).
recipe_benchmark_link() {
  # shellcheck disable=SC2086  # MLGO_CFLAGS is a list of flags
  run_logged nice -n 10 "$CC" -std=c99 $MLGO_CFLAGS -Ideps/sqlite3 \
    -c "$BENCHMARKS_DIR/sqlite/bench.c" -o bench-sqlite.o
  run_logged nice -n 10 "$CC" bench-sqlite.o deps/sqlite3/sqlite3.o -lpthread -ldl -lm -o bench-sqlite
}
recipe_benchmark_input() {
  local orders=60000
  [ "$2" = full ] || orders=200
  echo "$orders" >"$1/orders"
}
recipe_benchmark_run() {
  bench_exec "$OBJDIR/bench-sqlite" orders
}

run_recipe "$@"
