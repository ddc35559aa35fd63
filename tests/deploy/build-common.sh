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
