# Sourced by the launcher's real-compile tests (hostile-commands.sh,
# ccache.sh): counted checks, .text of an object, and the two-function C file
# on which a never-inline policy and -Oz give different .text.
# launcher_test_scratch BUILD_DIR SCRATCH sets build, scratch, cc (mlgo-cc)
# and clang, and moves into an empty SCRATCH with none of the launcher's
# variables inherited from outside.
tools="${tools:-$(llvm-config-22 --bindir)}"
failures=0
launcher_test_scratch() {
  build="$(realpath "$1")" scratch="$(realpath -m "$2")"
  cc="$build/apps/mlgo-cc" clang="$tools/clang"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  cd "$scratch"
  unset MLGO_POLICY MLGO_PIPELINE_POLICY MLGO_POLICY_FALLBACK MLGO_BEST_OF MLGO_BEST_OF_VERIFY \
    MLGO_CCACHE
}
pass() { echo "ok   $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}
text() { "$tools/llvm-size" -A "$1" | awk '$1 ~ /^\.text/ {s += $2} END {print s + 0}'; }
never_policy='{"format":"mlgo-es-policy","version":1,"kind":"constant","inputs":[],"advice":0}'
heuristic_policy='{"format":"mlgo-es-policy","version":1,"kind":"heuristic","inputs":[{"name":"inlining_default","port":0,"shape":[1],"type":"int64_t"}]}'
# write_two_functions FILE: -Oz inlines twice() into f(); never-inline keeps the call.
write_two_functions() {
  printf 'static int twice(int x) { return 2 * x; }\nint f(int x) { return twice(x) + 1; }\n' >"$1"
}
