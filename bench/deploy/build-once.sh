#!/usr/bin/env bash
# build-once.sh RECIPE WORK_DIR [POLICY]
#
# One build of RECIPE from source (configure + make, MLGO_JOBS=1) in WORK_DIR,
# with plain clang-22 -Oz when POLICY is absent, else through mlgo-cc with
# POLICY (a file or a shipped name; a pass-pipeline policy is given as
# MLGO_PIPELINE_POLICY). MLGO_BEST_OF=1 or MLGO_BEST_OF_SET=1 in the
# environment reach the launcher. It prints nothing on success: run it
# under a timer, e.g. /usr/bin/time -f "%U %S" or a repeated, paired timer,
# to get what a build pays for a policy (docs/inlining-results.md, build
# cost). MLGO_BUILD_DIR: the mlgo-es build (default build/).
set -euo pipefail
[ $# -ge 2 ] || {
  sed -n '2,11p' "$0"
  exit 2
}
recipe=$1 dir=$(realpath -m "$2") policy=${3:-}
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(realpath "${MLGO_BUILD_DIR:-$source_dir/build}")"
launcher=()
if [ -n "$policy" ]; then
  [ ! -f "$policy" ] || policy=$(realpath "$policy")
  launcher=(--launcher "$build/apps/mlgo-cc")
  file=$policy
  [ -f "$file" ] || file="$source_dir/configs/policies/$policy.json"
  [ -f "$file" ] || file="$source_dir/configs/policies/$policy.policy" # the blob form
  # A pass-pipeline policy goes where the launcher's --mlgo-best-of-set
  # (MLGO_BEST_OF_SET=1 from the caller) looks for one.
  if grep -q '"kind": *"pipeline"' "$file" 2>/dev/null; then
    export MLGO_PIPELINE_POLICY=$policy
  else
    export MLGO_POLICY=$policy
  fi
fi
rm -rf "$dir"
mkdir -p "$dir"
# Plain -Oz as a user builds (no embedded bitcode: nothing is extracted).
MLGO_RECIPE_CFLAGS="-Oz -w" MLGO_JOBS=1 MLGO_BUILD_DIR="$build" "$source_dir/corpus/recipes/$recipe.sh" --work-dir "$dir" \
  --build-only --force "${launcher[@]}" >"$dir.log" 2>&1 || {
  echo "build-once: $recipe failed (see $dir.log)" >&2
  exit 1
}
