#!/usr/bin/env bash
# build-search.sh [--budgets "4 16 64"] [--policy NAME|FILE] [--no-tests] OUT_DIR RECIPE…
#
# Builds each recipe from source through mlgo-cc several ways and prints
# Markdown tables (also OUT_DIR/summary.md):
#   -Oz          plain clang-22 (the recipe as it is)
#   policy       mlgo-cc with the policy alone
#   best-of      mlgo-cc --mlgo-best-of (MLGO_BEST_OF=1): the smaller of the
#                policy's and -Oz's object
#   search-B     mlgo-cc --mlgo-search=B (MLGO_SEARCH=B) from an empty cache
#   rebuild-B    the same build again from the warm cache (the largest budget
#                of --rebuild-budget, default 16): CPU and byte-identical objects
# For each: the compiles' CPU time (user + system of every compile command,
# configure's test programs excluded, summed over make -j$MLGO_JOBS), the
# total .text of the objects, objects larger / smaller than -Oz's, and the
# linked programs' .text (every ELF executable the build and its tests make).
# Then the program's own tests run on the search build (zlib: make test;
# lua: the interpreter; xz: make -C tests check; libpng: pngtest; bzip2:
# make test; ninja: builds a project). Figures, not assertions, except that a
# failing test or an object larger than -Oz's is reported as such.
# MLGO_BUILD_DIR: the mlgo-es build (default build/). MLGO_JOBS: make -j (2).
set -euo pipefail
budgets="4 16 64" policy=inlining-oz tests=1 rebuild=16
while [ $# -gt 0 ]; do
  case "$1" in
    --budgets) budgets="$2"; shift 2 ;;
    --policy) policy="$2"; shift 2 ;;
    --rebuild-budget) rebuild="$2"; shift 2 ;;
    --no-tests) tests=0; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { sed -n '2,20p' "$0"; exit 2; }
out="$(realpath -m "$1")"
shift
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(realpath "${MLGO_BUILD_DIR:-$source_dir/build}")"
tools="$(llvm-config-22 --bindir 2>/dev/null || echo /usr/lib/llvm-22/bin)"
export MLGO_JOBS="${MLGO_JOBS:-2}"
mkdir -p "$out"
case "$policy" in
  */*) policy="$(realpath "$policy")" ;;
  *) policy="$source_dir/configs/policies/$policy.json" ;;
esac
[ -f "$policy" ] || { echo "no policy $policy" >&2; exit 2; }

text_of() { # .text bytes of one ELF file
  { "$tools/llvm-size" -A "$1" 2>/dev/null || true; } |
    awk '$1==".text" || $1 ~ /^\.text\./ {s += $2} END {print s + 0}'
}
objects_of() { # relative paths of the objects a build made, sorted (not configure's or CMake's probes)
  (cd "$1" && find . -name '*.o' -type f ! -name 'conftest*' ! -path '*/CMakeFiles/_CMake*' \
    ! -path '*/CMakeFiles/[0-9]*' | sort)
}
programs_of() { # relative paths of the ELF executables a build made
  (cd "$1" && find . -type f -perm -u+x ! -name '*.so*' ! -name '*.o' -print0 |
    xargs -0 -r file | awk -F: '/ELF .*executable/ {print $1}' | sort)
}

# Compiler wrappers that log each compile's CPU (user + system) to
# $MLGO_BENCH_CPU_LOG; `real` is mlgo-cc/mlgo-c++, or clang for -Oz (which
# in CMake's launcher mode, compiler first, runs that compiler as it is).
make_wrappers() { # DIR REAL_C REAL_CXX PLAIN(0|1)
  mkdir -p "$1"
  for pair in "mlgo-cc:$2" "mlgo-c++:$3"; do
    {
      echo '#!/usr/bin/env bash'
      echo "real='${pair#*:}'"
      [ "$4" = 0 ] || echo 'case "${1:-}" in */clang* | clang*) real="$1"; shift ;; esac'
      echo 'case " $* " in *conftest* | *ztest*) exec "$real" "$@" ;; esac' # configure's probes (zlib's: ztest)
      echo 'exec /usr/bin/time -a -o "${MLGO_BENCH_CPU_LOG:-/dev/null}" -f "%U %S" "$real" "$@"'
    } >"$1/${pair%%:*}"
    chmod +x "$1/${pair%%:*}"
  done
}
make_wrappers "$out/bin-oz" "$tools/clang" "$tools/clang++" 1
make_wrappers "$out/bin-mlgo" "$build/apps/mlgo-cc" "$build/apps/mlgo-c++" 0

# variant RECIPE NAME WRAPPERS [env…]: builds into OUT/RECIPE-NAME; prints CPU seconds.
variant() {
  local recipe="$1" name="$2" wrappers="$3"
  shift 3
  local dir="$out/$recipe-$name"
  rm -rf "$dir/build" "$dir/cpu"
  mkdir -p "$dir"
  env MLGO_BUILD_DIR="$build" MLGO_BENCH_CPU_LOG="$dir/cpu" "$@" \
    "$source_dir/corpus/recipes/$recipe.sh" --work-dir "$dir" --build-only --force \
    --launcher "$wrappers/mlgo-cc" >"$dir/recipe.log" 2>&1 || {
    echo "$recipe ($name) failed: $dir/recipe.log" >&2
    return 1
  }
  awk '{s += $1 + $2} END {printf "%.1f", s}' "$dir/cpu"
}

# The program's own tests, in the build made by `variant` (same environment).
run_tests() { # RECIPE DIR [env…]
  local recipe="$1" dir="$2" built="$2/build"
  shift 2
  (
    export "$@" MLGO_BENCH_CPU_LOG=/dev/null
    case "$recipe" in
      zlib) make -C "$built" test >"$dir/tests.log" 2>&1 && grep -q "zlib test OK" "$dir/tests.log" ;;
      lua)
        [ "$("$built/src/lua" -e 'local t = {} for i = 1, 100 do t[i] = (i * 37) % 100 end table.sort(t) print(t[1], t[100], ("x"):rep(3))')" = "$(printf '0\t99\txxx')" ] ;;
      xz) make -C "$built/tests" check >"$dir/tests.log" 2>&1 ;;
      libpng) make -C "$built" pngtest >"$dir/tests.log" 2>&1 && (cd "$built" && ./pngtest pngtest.png >>"$dir/tests.log" 2>&1) ;;
      bzip2) make -C "$built" CC="$out/bin-mlgo/mlgo-cc" test >"$dir/tests.log" 2>&1 ;;
      ninja)
        mkdir -p "$dir/smoke" &&
          printf 'rule cp\n  command = cp $in $out\nbuild out.txt: cp in.txt\n' >"$dir/smoke/build.ninja" &&
          echo hello >"$dir/smoke/in.txt" && "$built/_b/ninja" -C "$dir/smoke" >"$dir/tests.log" 2>&1 &&
          [ "$(cat "$dir/smoke/out.txt")" = hello ] ;;
      *) echo "(no tests known)" >"$dir/tests.log" ;;
    esac
  )
}

summary="$out/summary.md"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
say "| code base | build | compile CPU s | × -Oz | objects .text B | vs -Oz | objects larger / smaller | programs .text B | vs -Oz | tests |"
say "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |"
for recipe in "$@"; do
  names=(-Oz policy best-of)
  for b in $budgets; do names+=("search-$b"); done
  names+=("rebuild-$rebuild")
  declare -A cpu=() text=() ptext=()
  for name in "${names[@]}"; do
    env_=(MLGO_POLICY="$policy")
    wrappers="$out/bin-mlgo"
    case "$name" in
      -Oz) wrappers="$out/bin-oz" ;;
      best-of) env_+=(MLGO_BEST_OF=1) ;;
      search-*) rm -rf "$out/$recipe-cache-${name#search-}"
        env_+=(MLGO_SEARCH="${name#search-}" MLGO_SEARCH_CACHE="$out/$recipe-cache-${name#search-}") ;;
      rebuild-*) env_+=(MLGO_SEARCH="${name#rebuild-}" MLGO_SEARCH_CACHE="$out/$recipe-cache-${name#rebuild-}") ;;
    esac
    dir="$out/$recipe-$name"
    if [[ "$name" == rebuild-* ]]; then
      # The same build in the same place (paths are in the objects and the
      # cache keys), after the first build's objects are put aside.
      dir="$out/$recipe-search-$rebuild"
      rm -rf "$dir/first" && mv "$dir/build" "$dir/first"
      cpu[$name]="$(variant "$recipe" "search-$rebuild" "$wrappers" "${env_[@]}")" || continue
    else
      cpu[$name]="$(variant "$recipe" "$name" "$wrappers" "${env_[@]}")" || continue
    fi
    total=0 larger=0 smaller=0
    while read -r object; do
      t="$(text_of "$dir/build/$object")"
      total=$((total + t))
      if [ "$name" != -Oz ] && [ -f "$out/$recipe--Oz/build/$object" ]; then
        oz="$(text_of "$out/$recipe--Oz/build/$object")"
        [ "$t" -le "$oz" ] || { larger=$((larger + 1)); echo "$recipe $name: $object $t > $oz" >>"$out/larger.txt"; }
        [ "$t" -ge "$oz" ] || smaller=$((smaller + 1))
      fi
    done < <(objects_of "$dir/build")
    text[$name]=$total
    tested="-" ptotal="-"
    if [[ "$name" == rebuild-* ]]; then
      same=0 differ=0
      while read -r object; do
        if cmp -s "$dir/build/$object" "$dir/first/$object"; then
          same=$((same + 1))
        else differ=$((differ + 1)); fi
      done < <(objects_of "$dir/build")
      tested="$same identical, $differ differ"
    elif [ "$tests" = 1 ]; then
      if run_tests "$recipe" "$dir" "${env_[@]}"; then tested=pass; else tested="FAIL ($dir/tests.log)"; fi
      ptotal=0
      while read -r program; do
        [ -n "$program" ] && [ -f "$out/$recipe--Oz/build/$program" ] || continue
        ptotal=$((ptotal + $(text_of "$dir/build/$program")))
      done < <(programs_of "$dir/build")
      ptext[$name]=$ptotal
    fi
    rel() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "-" && b > 0) printf "%+.2f %%", 100 * (a - b) / b; else print "-"}'; }
    ratio="$(awk -v a="${cpu[$name]}" -v b="${cpu[-Oz]}" 'BEGIN {if (b > 0) printf "%.2f", a / b}')"
    say "| $recipe | $name | ${cpu[$name]} | $ratio | $total | $(rel "$total" "${text[-Oz]}") | $([ "$name" = -Oz ] && echo - || echo "$larger / $smaller") | $ptotal | $(rel "$ptotal" "${ptext[-Oz]:-0}") | $tested |"
  done
  unset cpu text ptext
done
echo "(budget → bytes: the search-B rows; objects larger than -Oz, if any: $out/larger.txt)" | tee -a "$summary"
