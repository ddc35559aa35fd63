#!/usr/bin/env bash
# launcher-process.sh BUILD_DIR SCRATCH
#
# What the launcher's own process costs a compile: mlgo-cc must not load
# libLLVM (its relocations alone cost ~45 ms of CPU on every compile, half a
# one-line compile), so what needs LLVM runs in helper programs. Checked on
# the executable's dynamic section, and on --mlgo-best-of-set, whose forced
# policy files mlgo-alternatives writes: cached per policy (a second compile
# does not run the helper), beside the object and removed when there is no
# cache, and a policy without a choice refused with its name.
set -euo pipefail
build="$(realpath "$1")" scratch="$(realpath -m "$2")"
source "$(dirname "$0")/checks.sh"
tools="$(llvm-config-22 --bindir)"
cc="$build/apps/mlgo-cc"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"

readelf -d "$cc" >needed.txt
grep -q NEEDED needed.txt || fail "readelf found no NEEDED entries in $cc"
if grep -i 'libLLVM' needed.txt; then
  fail "mlgo-cc needs libLLVM (something in deploy/ now uses a policies/ file that parses JSON)"
else
  pass "mlgo-cc does not load libLLVM"
fi

write_two_functions t.c
set_policy=pipeline-inlining-oz-set # shipped policies by name
plain_policy=pipeline-oz-v1

# A cache: the first compile writes the forced files, the second reuses them
# (a helper that always fails would fail it otherwise).
export XDG_CACHE_HOME="$scratch/cache"
if MLGO_PIPELINE_POLICY="$set_policy" "$cc" --mlgo-best-of-set -Oz -c t.c -o cached.o 2>err.log &&
  [ -n "$(find "$scratch/cache" -name count)" ]; then
  pass "--mlgo-best-of-set wrote the forced files into the cache"
else
  fail "--mlgo-best-of-set with a cache: $(cat err.log)"
fi
if MLGO_ALTERNATIVES=/bin/false MLGO_PIPELINE_POLICY="$set_policy" "$cc" --mlgo-best-of-set -Oz \
  -c t.c -o again.o 2>err.log && cmp -s cached.o again.o; then
  pass "a second compile uses the cached forced files, not the helper"
else
  fail "the second compile ran the helper or gave another object: $(cat err.log)"
fi
rm -rf "$scratch/cache"
if ! MLGO_ALTERNATIVES=/bin/false MLGO_PIPELINE_POLICY="$set_policy" "$cc" --mlgo-best-of-set \
  -Oz -c t.c -o failed.o 2>err.log && grep -q "mlgo-best-of-set: /bin/false" err.log; then
  pass "a failing helper fails the compile, named"
else
  fail "a failing helper: $(cat err.log)"
fi

# No cache: the files go beside the object and are removed afterwards.
unset XDG_CACHE_HOME
if env -u HOME MLGO_PIPELINE_POLICY="$set_policy" "$cc" --mlgo-best-of-set -Oz -c t.c \
  -o uncached.o 2>err.log && cmp -s cached.o uncached.o; then
  pass "--mlgo-best-of-set without a cache gives the same object"
else
  fail "--mlgo-best-of-set without a cache: $(cat err.log)"
fi
if ls -d ./*mlgo-alternative* >/dev/null 2>&1; then
  fail "--mlgo-best-of-set without a cache left files behind: $(ls -d ./*mlgo-alternative*)"
else
  pass "nothing left beside the object"
fi

# A pipeline policy without a choice: the helper's error names the file.
if ! HOME="$scratch/home" MLGO_PIPELINE_POLICY="$plain_policy" "$cc" --mlgo-best-of-set -Oz -c t.c \
  -o plain.o 2>err.log && grep -q "pipeline-oz-v1.json is not a pipeline policy with a choice" err.log; then
  pass "a policy without a choice is refused by name"
else
  fail "a policy without a choice: $(cat err.log)"
fi

[ "$failures" -eq 0 ] || {
  echo "$failures failures"
  exit 1
}
