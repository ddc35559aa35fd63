#!/usr/bin/env bash
# lto.sh BUILD_DIR MODE SCRATCH   (MODE: thin | full)
#
# Links Lua's interpreter with LTO through mlgo-cc and lld (2 ThinLTO
# threads): the link loads the plugin and its inliner asks the policy (a
# never-inline policy gives another binary than the heuristic, and an
# unreadable policy fails the link), and the interpreter runs.
set -euo pipefail
build="$(realpath "$1")" mode="$2" scratch="$(realpath -m "$3")"
cc="$build/apps/mlgo-cc"
sources="$build/corpora/lua/build/src"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ -f "$sources/lua.c" ] || fail "no Lua sources in $sources (run corpus/recipes/lua.sh)"
rm -rf "$scratch"
mkdir -p "$scratch/objects"
cd "$scratch"
echo '{"format":"mlgo-es-policy","version":1,"kind":"heuristic","inputs":[{"name":"inlining_default","port":0,"shape":[1],"type":"int64_t"}]}' >heuristic.json
echo '{"format":"mlgo-es-policy","version":1,"kind":"constant","inputs":[],"advice":0}' >never.json
echo '{"format":"mlgo-es-policy",' >broken.json

flags=(-Oz "-flto=$mode" -w -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX)
objects=()
for source in "$sources"/*.c; do
  name="$(basename "$source" .c)"
  [ "$name" != luac ] || continue
  MLGO_POLICY="$scratch/heuristic.json" "$cc" "${flags[@]}" -c "$source" -o "objects/$name.o"
  objects+=("objects/$name.o")
done

link() { # POLICY OUTPUT
  MLGO_POLICY="$scratch/$1" "$cc" "${flags[@]}" -fuse-ld=lld -Wl,--thinlto-jobs=2 \
    "${objects[@]}" -lm -ldl -o "$2"
}
text_bytes() {
  "$(llvm-config-22 --bindir)/llvm-size" -A "$1" | awk '$1==".text" {print $2}'
}
link heuristic.json lua-heuristic || fail "the $mode LTO link with the heuristic policy failed"
link never.json lua-never || fail "the $mode LTO link with the never-inline policy failed"
heuristic="$(text_bytes lua-heuristic)" never="$(text_bytes lua-never)"
[ "$never" != "$heuristic" ] ||
  fail "never-inline at link time did not change the binary (.text $never vs $heuristic B): the linker did not use the policy"
if link broken.json lua-broken 2>broken.log; then
  fail "the link with an unreadable policy succeeded"
fi
grep -q "mlgo-inliner: .*broken.json" broken.log || fail "no error naming the policy: $(cat broken.log)"
[ "$(./lua-heuristic -e 'print(("lto"):rep(2), 6 * 7)')" = "$(printf 'ltolto\t42')" ] ||
  fail "the LTO-linked interpreter does not run"
echo "$mode LTO: lld loaded the plugin; .text $heuristic B (heuristic), $never B (never inline); the interpreter runs"
