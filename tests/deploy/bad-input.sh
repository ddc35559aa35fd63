#!/usr/bin/env bash
# bad-input.sh BUILD_DIR SCRATCH
#
# Every way a build can get the policy wrong ends the compile with a non-zero
# status and one line naming the cause; the opt-in fallback compiles -Oz.
set -euo pipefail
build="$(realpath "$1")" scratch="$(realpath -m "$2")"
cc="$build/apps/mlgo-cc"
plugin="$build/inprocess/libmlgo-inliner.so"
clang="$(llvm-config-22 --bindir)/clang"
rm -rf "$scratch"
mkdir -p "$scratch/project/sub"
cd "$scratch"
printf 'static int twice(int x) { return 2 * x; }\nint f(int x) { return twice(x) + 1; }\n' >t.c
echo '{"format":"mlgo-es-policy",' >broken.json
echo '{"format":"mlgo-es-policy","version":1,"kind":"heuristic","inputs":[{"name":"callee_embedding","port":0,"shape":[1],"type":"int64_t"}]}' >other-features.json
echo '{"format":"mlgo-es-policy","version":1,"kind":"heuristic","inputs":[{"name":"inlining_default","port":0,"shape":[1],"type":"int64_t"}]}' >project/mlgo-policy.json
failures=0

# expect_failure NAME PATTERN COMMAND…: non-zero exit, one error line matching PATTERN.
expect_failure() {
  local name="$1" pattern="$2"
  shift 2
  local status=0
  "$@" >out.log 2>&1 || status=$?
  local errors
  errors="$(grep -c 'error:' out.log || true)"
  if [ "$status" -eq 0 ] || ! grep -q -- "$pattern" out.log || [ "$errors" -ne 1 ]; then
    echo "FAIL $name: exit $status, $errors error lines, want /$pattern/:"
    sed 's/^/  | /' out.log
    failures=$((failures + 1))
  else
    echo "ok   $name: $(grep 'error:' out.log)"
  fi
}

unset MLGO_POLICY MLGO_POLICY_FALLBACK
expect_failure "plugin, no policy" "no policy: set MLGO_POLICY" \
  "$clang" -Oz -c t.c -o t.o -fpass-plugin="$plugin"
expect_failure "launcher, no policy" "no policy: set MLGO_POLICY" "$cc" -Oz -c t.c -o t.o
expect_failure "missing policy file" "MLGO_POLICY=$scratch/nope.json: no such policy file" \
  env MLGO_POLICY="$scratch/nope.json" "$cc" -Oz -c t.c -o t.o
expect_failure "launcher, missing --mlgo-policy" "--mlgo-policy=nope.json: no such policy file" \
  "$cc" --mlgo-policy=nope.json -Oz -c t.c -o t.o
expect_failure "unreadable policy" "broken.json: invalid JSON" \
  env MLGO_POLICY="$scratch/broken.json" "$cc" -Oz -c t.c -o t.o
expect_failure "policy for another feature set" \
  "other-features.json does not fit LLVM 22.*\"callee_embedding\".*missing" \
  env MLGO_POLICY="$scratch/other-features.json" "$cc" -Oz -c t.c -o t.o
expect_failure "plugin in another LLVM's clang" "unable to load plugin .*libmlgo-inliner.so" \
  env MLGO_POLICY="$scratch/project/mlgo-policy.json" /usr/bin/clang-14 -Oz -c t.c -o t.o \
  -fpass-plugin="$plugin"
expect_failure "launcher given another LLVM's clang" "is not clang 22" \
  "$cc" --mlgo-policy=project/mlgo-policy.json /usr/bin/clang-14 -Oz -c t.c -o t.o
expect_failure "LTO link without lld" "add -fuse-ld=lld" \
  "$cc" --mlgo-policy=project/mlgo-policy.json -flto=thin t.o -o t
expect_failure "unknown launcher option" "unknown launcher option --mlgo-polcy=x" \
  "$cc" --mlgo-polcy=x -Oz -c t.c -o t.o

# The opt-in fallback: a warning (even under -w), LLVM's heuristic, exit 0.
"$clang" -Oz -c t.c -o plain.o
MLGO_POLICY_FALLBACK=heuristic MLGO_POLICY="$scratch/broken.json" "$cc" -Oz -w -c t.c -o fallback.o \
  2>fallback.log
if grep -q "mlgo-inliner: warning: .*broken.json.*heuristic" fallback.log && cmp -s plain.o fallback.o; then
  echo "ok   fallback: $(cat fallback.log)"
else
  echo "FAIL fallback: $(cat fallback.log)"
  failures=$((failures + 1))
fi
# The policy is parsed at a compile's first inlining decision: a file with
# no call to a defined function (a configure probe) compiles as -Oz with an
# unreadable policy, and every compile with a decision still fails on it.
# (The file must say its kind: one that does not is read at once, as above.)
printf 'int main(void) { return 0; }\n' >probe.c
echo '{"format":"mlgo-es-policy","version":3,"kind":"mlp","inputs":[' >broken-mlp.json
"$clang" -Oz -c probe.c -o probe-plain.o
if MLGO_POLICY="$scratch/broken-mlp.json" "$cc" -Oz -c probe.c -o probe.o 2>probe.log &&
  cmp -s probe-plain.o probe.o; then
  echo "ok   a compile without decisions does not parse the policy"
else
  echo "FAIL a compile without decisions: $(cat probe.log)"
  failures=$((failures + 1))
fi
expect_failure "unreadable policy, read at the first decision" "broken-mlp.json: invalid JSON" \
  env MLGO_POLICY="$scratch/broken-mlp.json" "$cc" -Oz -c t.c -o t.o
# Only an inliner policy waits: a pipeline policy given as MLGO_POLICY is read
# when the pipeline is built (its passes would otherwise be dropped), so its
# errors show even without decisions.
printf '{"format":"mlgo-es-policy","version":3,"kind":"pipeline","pipeline":{"skip":["NoSuchPass"]}}\n' \
  >bad-pipeline.json
expect_failure "pipeline policy as MLGO_POLICY, no decisions" "bad-pipeline.json" \
  env MLGO_POLICY="$scratch/bad-pipeline.json" "$cc" -Oz -c probe.c -o probe.o

# A policy beside the build: mlgo-policy.json in a parent directory.
if (cd project/sub && "$cc" -Oz -c ../../t.c -o ../../found.o) && cmp -s plain.o found.o; then
  echo "ok   mlgo-policy.json found in a parent directory"
else
  echo "FAIL mlgo-policy.json in a parent directory"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
