#!/usr/bin/env bash
# ccache.sh BUILD_DIR SCRATCH
#
# ccache and the launcher together (issue 28): behind the launcher
# (--mlgo-ccache, or `ccache` before the compiler) a changed policy file
# always rebuilds and an unchanged one is a cache hit; in front of the
# launcher it is refused unless the policy and the plugin are in ccache's
# hash (CCACHE_EXTRAFILES), and then a changed policy rebuilds too.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v ccache >/dev/null || {
  echo "FAIL: ccache is not installed (scripts/setup.sh installs it)"
  exit 1
}
source "$here/checks.sh"
launcher_test_scratch "$1" "$2"
plugin="$build/inprocess/libmlgo-inliner.so"
unset CCACHE_EXTRAFILES CCACHE_DISABLE
export CCACHE_DIR="$scratch/cache" CCACHE_NOHASHDIR=1
hits() { ccache --print-stats | awk -F'\t' '$1=="direct_cache_hit" || $1=="preprocessed_cache_hit" {s += $2} END {print s + 0}'; }

write_two_functions a.c
heuristic=$heuristic_policy never=$never_policy
"$tools/clang" -Oz -c a.c -o oz.o
echo "$never" >never.json
MLGO_POLICY="$scratch/never.json" "$cc" -Oz -c a.c -o never.o
oz="$(text oz.o)" never_bytes="$(text never.o)"
[ "$oz" != "$never_bytes" ] || {
  echo "FAIL: never-inline and -Oz give the same .text"
  exit 1
}

# compile_as NAME POLICY-TEXT WANT-BYTES WANT-HIT COMMAND…: writes POLICY-TEXT
# into pol.json, compiles with COMMAND, checks the object and whether ccache hit.
compile_as() {
  local name="$1" policy="$2" want="$3" want_hit="$4"
  shift 4
  echo "$policy" >pol.json
  local before after
  before="$(hits)"
  rm -f out.o
  "$@" -Oz -c a.c -o out.o || {
    fail "$name: the compile failed"
    return
  }
  after="$(hits)"
  local hit=no
  [ "$after" -gt "$before" ] && hit=yes
  if [ "$(text out.o)" = "$want" ] && [ "$hit" = "$want_hit" ]; then
    pass "$name: .text $(text out.o) B, cache hit: $hit"
  else
    fail "$name: .text $(text out.o) B (want $want), cache hit: $hit (want $want_hit)"
  fi
}

for form in "--mlgo-ccache" "ccache"; do
  ccache -C >/dev/null
  if [ "$form" = ccache ]; then run=("$cc" --mlgo-policy=pol.json ccache "$tools/clang")
  else run=("$cc" --mlgo-policy=pol.json --mlgo-ccache); fi
  compile_as "$form: first compile" "$heuristic" "$oz" no "${run[@]}"
  compile_as "$form: same policy again" "$heuristic" "$oz" yes "${run[@]}"
  compile_as "$form: the policy file's content changed" "$never" "$never_bytes" no "${run[@]}"
  compile_as "$form: back to the first policy" "$heuristic" "$oz" yes "${run[@]}"
done

# ccache in front of the launcher: refused, naming the fix…
echo "$heuristic" >pol.json
if ccache "$cc" --mlgo-policy=pol.json -Oz -c a.c -o front.o 2>front.log; then
  fail "ccache in front of the launcher was accepted without the policy in its hash"
fi
grep -q "ccache runs this launcher.*--mlgo-ccache.*CCACHE_EXTRAFILES=" front.log &&
  pass "ccache in front refused: $(grep -o 'ccache runs this launcher[^.]*' front.log)" ||
  fail "ccache in front: $(cat front.log)"
# …and accepted when the policy and the plugin are in its hash.
ccache -C >/dev/null
export CCACHE_EXTRAFILES="$scratch/pol.json:$plugin"
front=(ccache "$cc" --mlgo-policy=pol.json)
compile_as "ccache in front, files hashed: first" "$heuristic" "$oz" no "${front[@]}"
compile_as "ccache in front, files hashed: again" "$heuristic" "$oz" yes "${front[@]}"
compile_as "ccache in front, files hashed: policy changed" "$never" "$never_bytes" no "${front[@]}"
[ "$failures" -eq 0 ]
