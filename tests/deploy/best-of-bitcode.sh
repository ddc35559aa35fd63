#!/usr/bin/env bash
# best-of-bitcode.sh BUILD_DIR SCRATCH
#
# Under --mlgo-best-of and --mlgo-best-of-set, a C++ unit's compiles after
# the first start from its module as the first compile's plugin wrote it
# (MLGO_UNIT_BITCODE), not from the source. Checked for real, through
# mlgo-cc and clang-22, on a C++ unit with the standard library's headers:
#   - the compile without the policy runs from the bitcode (-x ir), its code
#     is plain clang++ -Oz's, and the object kept is the smaller;
#   - --mlgo-best-of-verify compiles it from the source too and passes, also
#     with -g, -fsanitize=address, -fprofile-instr-generate, -march=native;
#   - a C unit, a compile through response files or ccache: every compile
#     from the source;
#   - a module clang cannot read: the launcher compiles from the source
#     instead, and the result is the same;
#   - --mlgo-best-of-set: the alternatives from the bitcode give the object
#     the compiles from the source give;
#   - with the ninja corpus build (extended tests): ten of its sources under
#     inlining-oz-small with --mlgo-best-of-verify.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/checks.sh"
launcher_test_scratch "$1" "$2"

cat >unit.cc <<'CXX'
#include <map>
#include <string>
#include <vector>
static int twice(int x) { return 2 * x; }
int f(int x) { return twice(x) + 1; }
std::map<std::string, int> count(const std::vector<std::string>& words) {
  std::map<std::string, int> counts;
  for (const auto& w : words)
    ++counts[w];
  return counts;
}
CXX
write_two_functions a.c
echo "$never_policy" >never.json
"$tools/clang++" -Oz -c unit.cc -o oz.o
code() { "$tools/llvm-objcopy" -O binary --only-section='.text*' "$1" "$1.code" && cat "$1.code"; }
from_bitcode() { grep -q -- "-x ir .*\.mlgo-unit\.bc" "$1"; }

# mlgo-cc's compile of unit.cc to NAME.o with ARGS, its stderr in NAME.log.
compile() {
  local name=$1
  shift
  MLGO_POLICY=never.json "$cc" --mlgo-verbose -Oz -c unit.cc -o "$name.o" "$@" 2>"$name.log"
}

compile best --mlgo-best-of || fail "best-of: $(cat best.log)"
if from_bitcode best.log && grep -q "kept without" best.log && cmp -s <(code best.o) <(code oz.o); then
  pass "C++: the compile without the policy from the unit's bitcode; kept, with -Oz's code"
else
  fail "C++ from bitcode: $(grep -E 'kept|-x ir' best.log || cat best.log)"
fi
[ ! -e best.o.mlgo-unit.bc ] || fail "the unit's bitcode was left behind"
if compile verified --mlgo-best-of --mlgo-best-of-verify && from_bitcode verified.log &&
  grep -q "alternative-1.o.source.o" verified.log; then
  pass "--mlgo-best-of-verify: the bitcode compile's code is the source compile's"
else
  fail "--mlgo-best-of-verify on C++: $(cat verified.log)"
fi

# Flags whose work clang adds to the pipeline or the module (debug info,
# sanitizer and profile passes, sections, the host's CPU): the same code.
for flags in "-g -ffunction-sections -fPIC" "-fsanitize=address" "-fprofile-instr-generate -march=native"; do
  # shellcheck disable=SC2086 # the flags are words
  if compile flagged --mlgo-best-of --mlgo-best-of-verify $flags && from_bitcode flagged.log; then
    pass "$flags: from the bitcode, verified"
  else
    fail "$flags: $(grep -v -- '-cc1' flagged.log | tail -3)"
  fi
done

MLGO_POLICY=never.json "$cc" --mlgo-best-of --mlgo-verbose -Oz -c a.c -o c.o 2>c.log ||
  fail "C: $(cat c.log)"
if grep -q "MLGO_UNIT_BITCODE" c.log; then fail "a C unit's bitcode was asked for"; else
  pass "C: every compile from the source"; fi
echo "-Oz -c unit.cc -o rsp.o" >args.rsp
MLGO_POLICY=never.json "$cc" --mlgo-best-of --mlgo-verbose @args.rsp 2>rsp.log ||
  fail "response file: $(cat rsp.log)"
if grep -q "MLGO_UNIT_BITCODE" rsp.log; then fail "response files: bitcode asked for"; else
  pass "response files: every compile from the source"; fi

# Through ccache (a stand-in that runs the compiler): from the source, so
# that ccache caches the plain compile a rebuild looks up.
mkdir -p fake
printf '#!/bin/sh\nexec "$@"\n' >fake/ccache
chmod +x fake/ccache
if PATH="$scratch/fake:$PATH" compile cached --mlgo-best-of --mlgo-ccache &&
  ! grep -q "MLGO_UNIT_BITCODE" cached.log && grep -q "kept without" cached.log; then
  pass "through ccache: every compile from the source"
else
  fail "through ccache: $(grep -v -- '-cc1' cached.log | tail -3)"
fi

# A module clang cannot read: its path taken by a directory the plugin cannot
# write over (nor the launcher remove).
mkdir -p spoilt.o.mlgo-unit.bc/kept
if compile spoilt --mlgo-best-of && grep -q "kept without" spoilt.log &&
  cmp -s <(code spoilt.o) <(code oz.o) &&
  grep -qE "clang(\+\+)? -Oz -c unit.cc -o spoilt.o.mlgo-alternative-1.o" spoilt.log; then
  pass "a module clang cannot read: compiled from the source instead, same result"
else
  fail "an unreadable module: $(cat spoilt.log)"
fi
[ -d spoilt.o.mlgo-unit.bc/kept ] || fail "the directory in the bitcode's place was removed"

# --mlgo-best-of-set: from the bitcode, and from the source (response files).
set_policy=(--mlgo-pipeline-policy=pipeline-inlining-oz-set --mlgo-best-of-set)
"$cc" "${set_policy[@]}" --mlgo-verbose -Oz -c unit.cc -o set.o 2>set.log ||
  fail "best-of-set: $(cat set.log)"
echo "-Oz -c unit.cc -o set-source.o" >set.rsp
"$cc" "${set_policy[@]}" @set.rsp 2>set-source.log || fail "best-of-set: $(cat set-source.log)"
if from_bitcode set.log && cmp -s <(code set.o) <(code set-source.o); then
  pass "--mlgo-best-of-set: alternatives from the bitcode, the same code as from the sources"
else
  fail "--mlgo-best-of-set from bitcode: $(grep -E 'kept|-x ir' set.log || cat set.log)"
fi

# Real C++ code, when the ninja corpus is built (the extended tests build it).
ninja_src="$build/corpora/ninja/build/src"
if [ -d "$ninja_src" ]; then
  n=0
  for source in "$ninja_src"/*.cc; do
    name="$(basename "$source" .cc)"
    case "$name" in *_test | *_perftest | browse) continue ;; esac
    [ "$n" -lt 10 ] || break
    "$cc" --mlgo-policy=inlining-oz-small --mlgo-best-of --mlgo-best-of-verify --mlgo-verbose -Oz \
      -w -std=c++11 -I "$ninja_src" -I "$build/corpora/ninja/build/_b" -c "$source" -o "n-$name.o" \
      2>"n-$name.log" || fail "ninja $name: $(tail -3 "n-$name.log")"
    if from_bitcode "n-$name.log"; then n=$((n + 1)); fi
  done
  if [ "$n" -gt 0 ]; then pass "ninja: $n units compiled again from their bitcode, every one verified"; else
    fail "ninja: no unit compiled again from its bitcode"; fi
else
  echo "skip ninja's sources: no corpus build in $ninja_src (extended tests)"
fi
[ "$failures" = 0 ] || exit 1
echo "best-of-bitcode: all checks passed"
