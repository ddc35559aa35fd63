#!/usr/bin/env bash
# best-of-exact.sh BUILD_DIR SCRATCH
#
# --mlgo-best-of skips the compile without the policy where the plugin
# reports the policy's compile was clang's own (policies/CompileReport.h).
# Checked for real, through mlgo-cc and clang-22:
#   - a policy that answers the heuristic's decisions: skipped, and the object
#     is plain clang -Oz's, byte for byte; --mlgo-best-of-verify compiles it
#     anyway and passes;
#   - a never-inline policy, a changed pipeline, a stale report left beside
#     the object: not skipped;
#   - a report that lies (a compiler wrapper writes "plain" after a policy's
#     compile): --mlgo-best-of-verify fails naming the object;
#   - zlib's sources under the shipped inlining-oz-small with
#     --mlgo-best-of-verify: every skip verified, some skipped, some not,
#     every object's .text at most plain -Oz's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/checks.sh"
launcher_test_scratch "$1" "$2"

write_two_functions a.c
echo "$never_policy" >never.json
echo "$heuristic_policy" >heuristic.json
cat >pipeline.json <<'JSON'
{"format": "mlgo-es-policy", "version": 2, "kind": "pipeline",
 "pipeline": {"skip": ["InstSimplifyPass"], "add": [{"at": "optimizer-last", "passes": "mergefunc"}]}}
JSON
"$clang" -Oz -c a.c -o oz.o

# compile NAME [ENV…] -- ARGS: mlgo-cc --mlgo-best-of --mlgo-verbose -Oz -c a.c
# -o NAME.o ARGS, its stderr in NAME.log.
compile() {
  local name=$1
  shift
  local environment=()
  while [ "$1" != -- ]; do environment+=("$1"); shift; done
  shift
  env "${environment[@]}" "$cc" --mlgo-best-of --mlgo-verbose -Oz -c a.c -o "$name.o" "$@" \
    2>"$name.log"
}
skipped() { grep -q "without skipped" "$1.log"; }

compile heuristic MLGO_POLICY=heuristic.json -- || fail "heuristic policy: $(cat heuristic.log)"
if skipped heuristic && cmp -s heuristic.o oz.o; then
  pass "heuristic policy: the compile without it skipped, the object plain -Oz's"
else
  fail "heuristic policy: $(grep kept heuristic.log || true); same bytes as -Oz: $(cmp -s heuristic.o oz.o && echo yes || echo no)"
fi
if compile verified MLGO_POLICY=heuristic.json -- --mlgo-best-of-verify && ! skipped verified &&
  grep -q "without $(text oz.o) B" verified.log; then
  pass "--mlgo-best-of-verify compiled the skipped compile and found the same object"
else
  fail "--mlgo-best-of-verify with the heuristic policy: $(cat verified.log)"
fi
compile never MLGO_POLICY=never.json -- || fail "never-inline: $(cat never.log)"
if skipped never; then fail "never-inline: skipped the compile without the policy"; else
  pass "never-inline: compiled without the policy too"; fi
compile pipeline MLGO_PIPELINE_POLICY=pipeline.json -- || fail "pipeline: $(cat pipeline.log)"
if skipped pipeline; then fail "a changed pipeline: skipped the compile without it"; else
  pass "a changed pipeline: compiled without it too"; fi
echo plain >stale.o.mlgo-report
compile stale MLGO_POLICY=never.json -- || fail "stale report: $(cat stale.log)"
if skipped stale; then fail "a stale report beside the object was believed"; else
  pass "a stale report beside the object is ignored"; fi
[ ! -e stale.o.mlgo-report ] || fail "the report was left behind"

# A report that lies: a compiler wrapper (put where --mlgo-ccache looks for
# ccache) writes "plain" after the policy's compile, which overruled.
mkdir -p fake
cat >fake/ccache <<'SH'
#!/bin/sh
"$@" || exit
[ -z "$MLGO_COMPILE_REPORT" ] || echo plain >"$MLGO_COMPILE_REPORT"
SH
chmod +x fake/ccache
if compile lie PATH="$scratch/fake:$PATH" MLGO_POLICY=never.json -- --mlgo-ccache --mlgo-best-of-verify; then
  fail "a lying report passed --mlgo-best-of-verify"
elif grep -q "mlgo-best-of-verify: .*lie.o" lie.log; then
  pass "a lying report: --mlgo-best-of-verify fails naming the object"
else
  fail "a lying report: $(cat lie.log)"
fi
if compile believed PATH="$scratch/fake:$PATH" MLGO_POLICY=never.json -- --mlgo-ccache &&
  skipped believed; then
  pass "a lying report without the verify flag is believed (the check above is what finds it)"
else
  fail "a lying report without the verify flag: $(cat believed.log)"
fi

# Real code: zlib's sources under the shipped distilled inliner policy.
zlib="$build/corpora/zlib/build"
if [ -d "$zlib" ]; then
  skips=0 compiles=0 larger=0
  for source in "$zlib"/*.c; do
    name="$(basename "$source" .c)"
    case "$name" in example | minigzip | example64 | minigzip64) continue ;; esac
    "$cc" --mlgo-policy=inlining-oz-small --mlgo-best-of --mlgo-best-of-verify --mlgo-verbose -Oz -w \
      -I "$zlib" -c "$source" -o "z-$name.o" 2>"z-$name.log" || fail "zlib $name: $(cat "z-$name.log")"
    "$cc" --mlgo-policy=inlining-oz-small --mlgo-best-of --mlgo-verbose -Oz -w -I "$zlib" -c "$source" \
      -o "s-$name.o" 2>"s-$name.log" || fail "zlib $name (skipping): $(cat "s-$name.log")"
    "$clang" -Oz -w -I "$zlib" -c "$source" -o "p-$name.o"
    if skipped "s-$name"; then skips=$((skips + 1)); else compiles=$((compiles + 1)); fi
    [ "$(text "s-$name.o")" -le "$(text "p-$name.o")" ] || larger=$((larger + 1))
  done
  echo "zlib under inlining-oz-small: $skips units skipped the second compile, $compiles did not"
  [ "$larger" = 0 ] || fail "zlib: $larger objects larger than plain -Oz's"
  if [ "$skips" -gt 0 ] && [ "$compiles" -gt 0 ]; then
    pass "zlib: every skip verified ($skips skipped, $compiles compiled twice)"
  else
    fail "zlib: $skips skipped, $compiles compiled twice: the test needs both"
  fi
else
  fail "no zlib corpus build in $zlib (the corpus.zlib fixture)"
fi
[ "$failures" = 0 ] || exit 1
echo "best-of-exact: all checks passed"
