#!/usr/bin/env bash
# hostile-commands.sh BUILD_DIR SCRATCH
#
# Commands that used to compile without the policy and exit 0 (issue 28):
# each is compiled for real through mlgo-cc with a never-inline policy on a
# file where never-inline and -Oz give different .text, and the object's
# .text must be the policy's (never the plain -Oz one's):
#   response files (nested), a source from standard input (also with
#   --best-of), -save-temps with --best-of (the saved files are the kept
#   object's), an LTO link by lld of bitcode objects without -flto on the
#   link line, unclassifiable commands (refused unless --mlgo-passthrough).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/checks.sh"
launcher_test_scratch "$1" "$2"
mkdir -p flags

write_two_functions a.c
echo "$never_policy" >never.json
"$clang" -Oz -c a.c -o oz.o
MLGO_POLICY="$scratch/never.json" "$cc" -Oz -c a.c -o never.o
oz="$(text oz.o)" never="$(text never.o)"
[ "$oz" != "$never" ] || {
  echo "FAIL: never-inline and -Oz give the same .text ($oz B): the test cannot tell them apart"
  exit 1
}
echo "reference: -Oz .text $oz B, never-inline $never B"
export MLGO_POLICY="$scratch/never.json"

# expect_text NAME OBJECT BYTES
expect_text() {
  local got
  got="$(text "$2" 2>/dev/null || echo none)"
  if [ "$got" = "$3" ]; then pass "$1: .text $got B"; else fail "$1: .text $got B, want $3 B"; fi
}

# 1. Response files, nested (clang finds the inner one from the working directory).
printf -- '-c a.c @flags/inner.rsp\n' >flags/outer.rsp
printf -- "-o 'rsp object.o'\n" >flags/inner.rsp
printf -- '-Oz @flags/outer.rsp\n' >args.rsp
"$cc" @args.rsp && expect_text "response files" "rsp object.o" "$never" ||
  fail "response files: the compile failed"
"$cc" --mlgo-best-of @args.rsp && expect_text "response files, --best-of" "rsp object.o" \
  "$([ "$never" -lt "$oz" ] && echo "$never" || echo "$oz")" || fail "response files, --best-of"
ls ./*.rsp.* "rsp object.o.mlgo-"* >/dev/null 2>&1 && fail "--best-of left temporaries" || true
printf -- '@loop.rsp\n' >loop.rsp
if "$cc" -Oz -c a.c @loop.rsp 2>loop.log; then fail "a response file including itself compiled"; fi
grep -q "includes itself" loop.log && pass "recursive response file: $(cat loop.log)" ||
  fail "recursive response file: $(cat loop.log)"

# 2. Source from standard input: the policy, with and without --best-of.
"$cc" -Oz -x c -c - -o stdin.o <a.c && expect_text "standard input" stdin.o "$never" ||
  fail "standard input: the compile failed"
smaller="$([ "$never" -lt "$oz" ] && echo "$never" || echo "$oz")"
"$cc" --mlgo-best-of -Oz -x c -c - -o stdin-best.o <a.c &&
  expect_text "standard input, --best-of" stdin-best.o "$smaller" || fail "standard input, --best-of"
# 3. -save-temps with --best-of: the saved files (.i, .bc, .s) must be the
# kept object's, whichever compile it came from (the saved assembly
# assembles to the kept object's .text). On a.c at -Oz never-inline is
# larger, so -Oz's object is kept; on b.c at -O2 (LLVM's heuristic inlines
# a loop into both callers) never-inline is smaller, so the policy's is.
printf 'extern int ext(int);\nstatic int work(int x, int y) { int s = 0; for (int i = 0; i < y; ++i) s += ext(x + i) * (i | 1); return s; }\nint a(int x) { return work(x, 4); }\nint b(int x) { return work(x, 5) + 1; }\n' >b.c
"$clang" -O2 -c b.c -o b-o2.o
"$cc" -O2 -c b.c -o b-never.o
mkdir -p temps
for case in "a.c -Oz $oz kept-plain" "b.c -O2 $(text b-never.o) kept-policy"; do
  read -r source level want kept <<<"$case"
  stem="${source%.c}"
  if [ "$kept" = kept-policy ] && [ "$want" -ge "$(text b-o2.o)" ]; then
    fail "-save-temps: never-inline is not smaller than -O2 on b.c: the case proves nothing"
    continue
  fi
  (cd temps && "$cc" --mlgo-best-of "$level" -save-temps -c "../$source" -o "$stem.o" &&
    "$clang" -c "$stem.s" -o "$stem-from-saved.o") || fail "-save-temps, --best-of ($source): compile failed"
  expect_text "-save-temps, --best-of ($source $level, $kept): kept object" "temps/$stem.o" "$want"
  expect_text "-save-temps, --best-of ($source $level, $kept): saved assembly" \
    "temps/$stem-from-saved.o" "$want"
done

# 4. An LTO link of bitcode objects by lld without -flto on the link line:
# the link-time inliner must ask the policy (never-inline keeps the call).
printf 'int leaf(int x) { return x * 7 + 1; }\n' >leaf.c
printf 'int leaf(int);\nint main(int argc, char **argv) { (void)argv; return leaf(argc) == 8 ? 0 : 1; }\n' >main.c
echo "$heuristic_policy" >heuristic.json
for f in leaf main; do MLGO_POLICY="$scratch/heuristic.json" "$cc" -Oz -flto -c $f.c -o $f.o; done
"$tools/llvm-ar" rcs libleaf.a leaf.o
MLGO_POLICY="$scratch/heuristic.json" "$cc" -Oz -fuse-ld=lld main.o -L. -lleaf -o prog-heuristic
"$cc" -Oz -fuse-ld=lld main.o -L. -lleaf -o prog-never --mlgo-verbose 2>link.log
if grep -q -- "--load-pass-plugin" link.log && [ "$(text prog-never)" != "$(text prog-heuristic)" ] &&
  ./prog-never && ./prog-heuristic; then
  pass "LTO link without -flto: the plugin is loaded, .text $(text prog-never) B (never) vs $(text prog-heuristic) B (heuristic)"
else
  fail "LTO link without -flto: .text $(text prog-never) vs $(text prog-heuristic); $(cat link.log)"
fi
if "$cc" -Oz main.o leaf.o -o prog-bfd 2>bfd.log; then fail "an LTO link by GNU ld was accepted"; fi
grep -q "main.o is LLVM bitcode.*-fuse-ld=lld" bfd.log && pass "LTO link by GNU ld refused: $(cat bfd.log)" ||
  fail "LTO link by GNU ld: $(cat bfd.log)"

# 5. Commands the launcher cannot classify: refused, or run as they are on request.
if "$cc" -cc1 -Oz -emit-obj a.c -o cc1.o 2>cc1.log; then fail "-cc1 was run without the policy"; fi
grep -q "cannot tell what this command does.*-cc1.*--mlgo-passthrough" cc1.log &&
  pass "-cc1 refused: $(cat cc1.log)" || fail "-cc1: $(cat cc1.log)"
"$cc" --mlgo-passthrough -cc1 -triple x86_64-pc-linux-gnu -Oz -emit-obj a.c -o cc1.o &&
  pass "-cc1 with --mlgo-passthrough runs as it is" || fail "-cc1 with --mlgo-passthrough"

[ "$failures" -eq 0 ]
