# Sourced by the launcher's real-compile tests (hostile-commands.sh,
# ccache.sh): counted checks, .text of an object, and the two-function C file
# on which a never-inline policy and -Oz give different .text.
# Needs $tools (clang-22's bin directory).
failures=0
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
