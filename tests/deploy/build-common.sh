# shellcheck shell=bash
# Sourced by the tests that build a recipe from source through the launcher
# (launcher-build.sh, search-build.sh): the tools, a failure that ends the
# test, and a fresh scratch directory to work in.
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tools="$(llvm-config-22 --bindir 2>/dev/null || echo /usr/lib/llvm-22/bin)"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# enter_scratch DIR: DIR emptied and made the working directory.
enter_scratch() {
  rm -rf "$1"
  mkdir -p "$1"
  cd "$1"
}

# check_programs RECIPE BUILT APPS: the built code still works (zlib: make
# test; Lua: the interpreter, linked through the launcher; ninja: builds a
# project), in the working directory; other recipes have no check here.
check_programs() {
  local recipe="$1" built="$2" apps="$3" result
  case "$recipe" in
    zlib)
      make -C "$built" test >test.log 2>&1 || fail "zlib's make test: $(tail -n 20 test.log)"
      grep -q "zlib test OK" test.log || fail "zlib's make test did not say OK"
      echo "zlib: make test OK"
      ;;
    lua)
      "$apps/mlgo-cc" -o "$built/src/lua" "$built/src/lua.o" "$built/src/liblua.a" -lm -ldl
      result="$("$built/src/lua" -e '
        local t = {}
        for i = 1, 200 do t[i] = string.format("%03d", (i * 37) % 200) end
        table.sort(t)
        local co = coroutine.wrap(function(n) for i = 1, n do coroutine.yield(i * i) end end)
        local s = 0
        for _ = 1, 10 do s = s + co(10) end
        print(t[1], t[200], s, ("mlgo"):rep(3):upper(), math.floor(2^40 / 3))')"
      [ "$result" = "$(printf '000\t199\t385\tMLGOMLGOMLGO\t366503875925')" ] ||
        fail "lua printed: $result"
      echo "lua: the interpreter runs ($result)"
      ;;
    ninja)
      mkdir -p smoke
      printf 'rule cp\n  command = cp $in $out\nbuild out.txt: cp in.txt\n' >smoke/build.ninja
      echo hello >smoke/in.txt
      "$built/_b/ninja" -C smoke >ninja.log 2>&1 || fail "ninja: $(cat ninja.log)"
      [ "$(cat smoke/out.txt)" = hello ] || fail "ninja did not build out.txt"
      echo "ninja: $("$built/_b/ninja" --version) builds a project"
      ;;
  esac
}
