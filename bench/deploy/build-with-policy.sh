#!/usr/bin/env bash
# build-with-policy.sh POLICY OUT_DIR RECIPE…
#
# Builds each recipe from source four ways and prints Markdown tables: the
# build's CPU time (configure + make, user + system, MLGO_JOBS=1) and the
# total .text of its objects:
#   -Oz        plain clang-22 (the recipe as it is)
#   plugin     mlgo-cc with the heuristic policy: the plugin's own overhead
#   policy     mlgo-cc with POLICY
#   best-of    mlgo-cc --mlgo-best-of with POLICY (MLGO_BEST_OF=1)
# Figures, not assertions. MLGO_BUILD_DIR: the mlgo-es build (default build/).
set -euo pipefail
[ $# -ge 3 ] || {
  sed -n '2,12p' "$0"
  exit 2
}
policy="$(realpath "$1")" out="$(realpath -m "$2")"
shift 2
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(realpath "${MLGO_BUILD_DIR:-$source_dir/build}")"
tools="$(llvm-config-22 --bindir)"
mkdir -p "$out"
echo '{"format":"mlgo-es-policy","version":1,"kind":"heuristic","inputs":[{"name":"inlining_default","port":0,"shape":[1],"type":"int64_t"}]}' >"$out/heuristic.json"

# The objects of a finished recipe build: every relocatable with embedded bitcode.
total_text() {
  find "$1" -name '*.o' -type f -print0 | sort -z |
    xargs -0 "$tools/llvm-size" -A 2>/dev/null |
    awk '$1==".text" || $1 ~ /^\.text\./ {s += $2} END {print s + 0}'
}

# variant RECIPE NAME [env…]: builds, prints "cpu_seconds text_bytes".
variant() {
  local recipe="$1" name="$2"
  shift 2
  local dir="$out/$recipe-$name" launcher=()
  [ "$name" = "-Oz" ] || launcher=(--launcher "$build/apps/mlgo-cc")
  rm -rf "$dir"
  mkdir -p "$dir"
  env MLGO_JOBS=1 MLGO_BUILD_DIR="$build" "$@" /usr/bin/time -f "%U %S" -o "$dir/time" \
    "$source_dir/corpus/recipes/$recipe.sh" --work-dir "$dir" --build-only --force \
    "${launcher[@]}" >"$dir/recipe.log" 2>&1 || {
    echo "$recipe ($name) failed: $dir/recipe.log" >&2
    exit 1
  }
  echo "$(awk '{printf "%.1f", $1 + $2}' "$dir/time") $(total_text "$dir/build")"
}

declare -A cpu text
for recipe in "$@"; do
  for name in -Oz plugin policy best-of; do
    case "$name" in
      -Oz) result="$(variant "$recipe" "$name")" ;;
      plugin) result="$(variant "$recipe" "$name" MLGO_POLICY="$out/heuristic.json")" ;;
      policy) result="$(variant "$recipe" "$name" MLGO_POLICY="$policy")" ;;
      best-of) result="$(variant "$recipe" "$name" MLGO_POLICY="$policy" MLGO_BEST_OF=1)" ;;
    esac
    cpu[$recipe,$name]="${result% *}"
    text[$recipe,$name]="${result#* }"
    echo "$recipe $name: ${cpu[$recipe,$name]} s CPU, .text ${text[$recipe,$name]} B" >&2
  done
done

percent() { # A B [DECIMALS]: (A - B) / B
  awk -v a="$1" -v b="$2" -v d="${3:-3}" 'BEGIN {printf "%+." d "f %%", b ? 100 * (a - b) / b : 0}'
}
# table TITLE ARRAY DECIMALS RECIPE…: one Markdown table of ARRAY[recipe,variant].
table() {
  local title="$1" decimals="$3"
  local -n values="$2"
  shift 3
  echo
  echo "$title"
  echo
  echo "| code base | -Oz | plugin (heuristic policy) | policy | best-of |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  local recipe name base row
  for recipe in "$@"; do
    base="${values[$recipe,-Oz]}"
    row="| $recipe | $base"
    for name in plugin policy best-of; do
      row="$row | ${values[$recipe,$name]} ($(percent "${values[$recipe,$name]}" "$base" "$decimals"))"
    done
    echo "$row |"
  done
}
table "Build CPU time (configure + make, 1 job), seconds:" cpu 0 "$@"
table "Total .text of the objects, bytes (policy: $(basename "$policy")):" text 3 "$@"
