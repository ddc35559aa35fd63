#!/usr/bin/env bash
# search-build.sh BUILD_DIR RECIPE BUDGET SCRATCH
#
# mlgo-cc --mlgo-search on a real build from source (MLGO_SEARCH=BUDGET,
# the shipped inlining-oz policy), checking:
#   - never larger: every object's .text is at most the plain -Oz object's
#     (the recipe's own build), and the code still works (zlib: make test;
#     Lua: the interpreter);
#   - the cache: a rebuild hits for every unit and gives byte-identical
#     objects; a corrupt entry and a foreign entry are refused with a
#     warning and searched again (from the unit's latest answer: the same
#     object or a smaller one, the rest unchanged); an edited source
#     is the only unit searched again (make after the edit);
#   - determinism and concurrency: two builds at once into one empty cache,
#     at -j1 and -j2, give the first build's objects, and leave no entry the
#     cache refuses.
set -euo pipefail
build="$(realpath "$1")" recipe="$2" budget="$3" scratch="$(realpath -m "$4")"
apps="$build/apps"
plain="$build/corpora/$recipe/build"
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
enter_scratch "$scratch"
export MLGO_POLICY="$source_dir/configs/policies/inlining-oz.policy" MLGO_SEARCH="$budget"
export MLGO_SEARCH_CACHE="$scratch/cache"

text_bytes() {
  "$tools/llvm-size" -A "$1" | awk '$1==".text" || $1 ~ /^\.text\./ {s += $2} END {print s + 0}'
}
objects() { (cd "$1" && find . -name '*.o' -type f | sort); }
stat_of() { # hits | misses | refused | answers
  "$apps/mlgo-cc" --mlgo-cache-stats |
    awk -v what="$1" '/lookups:/ {h = $2; m = $4; r = $(NF - 2)} /entries:/ {a = $2}
      END {print (what == "hits" ? h : what == "misses" ? m : what == "refused" ? r : a)}'
}
build_recipe() { # WORK_DIR [JOBS]
  MLGO_JOBS="${2:-2}" "$source_dir/corpus/recipes/$recipe.sh" --launcher "$apps/mlgo-cc" \
    --work-dir "$1" --force >"$1.log" 2>&1 || fail "the $recipe build in $1 failed: $(tail -n 20 "$1.log")"
}
# Byte for byte; builds in other directories without the embedded bitcode
# and command line, which name the directory (the recipes embed them).
same_objects() { # DIR_A DIR_B WHAT [strip]
  local differ=0 count=0
  while read -r object; do
    count=$((count + 1))
    local a="$1/$object" b="$2/$object"
    if [ "${4:-}" = strip ]; then
      "$tools/llvm-objcopy" --remove-section=.llvmbc --remove-section=.llvmcmd "$a" a.o
      "$tools/llvm-objcopy" --remove-section=.llvmbc --remove-section=.llvmcmd "$b" b.o
      a=a.o b=b.o
    fi
    cmp -s "$a" "$b" || {
      echo "  $object differs"
      differ=$((differ + 1))
    }
  done < <(objects "$1")
  [ "$differ" -eq 0 ] || fail "$3: $differ of $count objects differ"
  echo "$3: $count objects byte-identical"
}

echo "== first build, budget $budget, empty cache"
# The launcher's scratch directories (one per unit) must all be gone after.
mkdir -p "$scratch/tmp"
TMPDIR="$scratch/tmp" build_recipe "$scratch/w1"
[ -z "$(ls -A "$scratch/tmp")" ] || fail "scratch left behind: $(ls "$scratch/tmp" | head -n 3)"
built="$scratch/w1/build"
cp -a "$built" "$scratch/first"
units="$(objects "$built" | wc -l)"
# (configure's probes compile through the launcher too: at least one miss per unit)
[ "$(stat_of misses)" -ge "$units" ] || fail "expected $units misses, the cache says $(stat_of misses)"
larger=0 smaller=0 total=0 plain_total=0
while read -r object; do
  [ -f "$plain/$object" ] || fail "$object: not in the plain -Oz build $plain"
  t="$(text_bytes "$built/$object")" p="$(text_bytes "$plain/$object")"
  total=$((total + t)) plain_total=$((plain_total + p))
  [ "$t" -le "$p" ] || {
    echo "  $object: .text $t B with the search, $p B at -Oz"
    larger=$((larger + 1))
  }
  [ "$t" -ge "$p" ] || smaller=$((smaller + 1))
done < <(objects "$built")
[ "$larger" -eq 0 ] || fail "$larger objects larger than -Oz's"
# The checks below mean something only if the search changed some object.
[ "$smaller" -gt 0 ] || fail "the search made no object smaller (budget $budget)"
echo "never larger: $units objects, $smaller smaller; .text $total B vs $plain_total B at -Oz"

check_programs "$recipe" "$built" "$apps"

echo "== rebuild from the warm cache"
hits="$(stat_of hits)"
find "$MLGO_SEARCH_CACHE/entries" -type f | sort >"$scratch/entries-before"
touch "$scratch/before-rebuild"
sleep 1
build_recipe "$scratch/w1"
[ "$(stat_of hits)" -ge $((hits + units)) ] || fail "the rebuild hit $(($(stat_of hits) - hits)) of $units units"
same_objects "$scratch/first" "$built" "rebuild"

echo "== a corrupt and a foreign entry"
# Entries the rebuild hit (a hit touches its entry): there before it and
# touched by it; not the entries of configure's probes, which the rebuild
# compiled anew (their files are named after a process id).
mapfile -t entries < <(comm -12 "$scratch/entries-before" \
  <(find "$MLGO_SEARCH_CACHE/entries" -type f -newer "$scratch/before-rebuild" | sort))
[ "${#entries[@]}" -ge 3 ] || fail "fewer than 3 cache entries used by the rebuild"
python3 - "${entries[0]}" <<'EOF'
import sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
data[len(data) // 2] ^= 1
open(path, 'wb').write(bytes(data))
EOF
cp "${entries[2]}" "${entries[1]}"
refused="$(stat_of refused)"
build_recipe "$scratch/w1"
[ "$(stat_of refused)" -eq $((refused + 2)) ] || fail "expected 2 refused entries, the cache says $(($(stat_of refused) - refused))"
grep -q "refused: checksum mismatch" "$scratch/w1/build.log" || fail "no warning about the corrupt entry"
grep -q "refused: it answers another key" "$scratch/w1/build.log" || fail "no warning about the foreign entry"
# The two units are searched again, from their latest answer (the cache
# keeps one per command, as after an edit): the same object or a smaller one;
# every other object is the same.
differ=0
while read -r object; do
  cmp -s "$scratch/first/$object" "$built/$object" && continue
  differ=$((differ + 1))
  [ "$(text_bytes "$built/$object")" -le "$(text_bytes "$scratch/first/$object")" ] ||
    fail "$object: larger after its entry was refused and searched again"
done < <(objects "$built")
[ "$differ" -le 2 ] || fail "after refused entries: $differ objects differ, more than the 2 refused"
echo "after refused entries: $differ of the 2 refused units changed (no larger), every other object the same"

echo "== an edited source"
edited="$(cd "$built" && find . -maxdepth 2 -name '*.c' | sort | head -n 1)"
echo "int mlgo_search_test_edit(int x) { return x * 3 + 1; }" >>"$built/$edited"
misses="$(stat_of misses)" hits="$(stat_of hits)"
case "$recipe" in
  zlib) make -C "$built" libz.a >edit.log 2>&1 ;;
  # The recipe's own make line (corpus/recipes/lua.sh).
  lua) make -C "$built/src" CC="$apps/mlgo-cc -std=gnu99" \
    CFLAGS="-Oz -Xclang -fembed-bitcode=all -w -DLUA_COMPAT_5_3 -DLUA_USE_LINUX" liblua.a >edit.log 2>&1 ;;
  *) fail "no edit step for $recipe" ;;
esac || fail "make after the edit: $(tail -n 20 edit.log)"
[ "$(stat_of misses)" -eq $((misses + 1)) ] || fail "the edit made $(($(stat_of misses) - misses)) misses, not 1"
[ "$(stat_of hits)" -eq "$hits" ] || fail "make after the edit compiled other units"
echo "edit: $edited searched again, nothing else"

echo "== --mlgo-search-verify: every incremental or replayed answer compiled in full too"
case "$recipe" in
  zlib) unit_dir="$built" unit=deflate.c ;;
  lua) unit_dir="$built/src" unit=lparser.c ;;
esac
for mode in plain verify; do
  flag=() && [ "$mode" = plain ] || flag=(--mlgo-search-verify)
  (cd "$unit_dir" && MLGO_SEARCH_CACHE="$scratch/cache-$mode" \
    "$apps/mlgo-cc" "${flag[@]}" -Oz -w -c "$unit" -o "$scratch/unit-$mode.o") 2>"verify-$mode.log" ||
    fail "$unit ($mode): $(cat "verify-$mode.log")"
done
! grep -q "warning" verify-verify.log || fail "the verified search warned: $(cat verify-verify.log)"
cmp -s "$scratch/unit-plain.o" "$scratch/unit-verify.o" || fail "$unit: verified search chose otherwise"
echo "verify: $unit, the same object with every answer checked by a full compile"

echo "== two builds at once, -j1 and -j2, into one empty cache"
export MLGO_SEARCH_CACHE="$scratch/shared-cache"
build_recipe "$scratch/w2" 1 &
first=$!
build_recipe "$scratch/w3" 2
wait "$first" || fail "the -j1 build failed"
same_objects "$scratch/first" "$scratch/w2/build" "-j1 build beside another" strip
same_objects "$scratch/first" "$scratch/w3/build" "-j2 build beside another" strip
[ "$(stat_of refused)" -eq 0 ] || fail "the shared cache refused entries"
echo "PASS"
