#!/usr/bin/env bash
# linked-text.sh SOURCE_DIR SCRATCH
#
# bench/linked_text.py counts a COMDAT group's code once across objects and
# everything else per object: two objects compiled from one C++ file whose
# only code is an inline function (emitted in a COMDAT group) count that
# function once together and twice per object; the same body as a static
# function (no group) counts in each object both ways; a C object has no
# groups, so its two figures agree; a directory without objects is an error.
set -euo pipefail
source_dir="$(realpath "$1")" scratch="$(realpath -m "$2")"
tool="$source_dir/bench/linked_text.py"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
rm -rf "$scratch"
mkdir -p "$scratch"/{one,inline,static,c,empty}
cd "$scratch"
cat >inline.cpp <<'CPP'
inline int scale(int x) { return x * 3 + (x >> 2) - 7; }
int (*use_scale)(int) = scale;
CPP
cat >static.cpp <<'CPP'
static int scale(int x) { return x * 3 + (x >> 2) - 7; }
int (*use_scale)(int) = scale;
CPP
cat >plain.c <<'C'
int scale(int x) { return x * 3 + (x >> 2) - 7; }
C
for copy in a b; do
  clang++-22 -O1 -c inline.cpp -o "inline/$copy.o"
  clang++-22 -O1 -c static.cpp -o "static/$copy.o"
  clang-22 -O1 -c plain.c -o "c/$copy.o"
done
cp inline/a.o one/a.o
# "DIR<TAB>N objects<TAB>per-object .text P<TAB>COMDAT groups once O" -> "P O"
figures() { "$tool" "$1" | awk -F'\t' '{sub(/.* /, "", $3); sub(/.* /, "", $4); print $3, $4}'; }
read -r one_per one_once < <(figures one)
read -r inline_per inline_once < <(figures inline)
read -r static_per static_once < <(figures static)
read -r c_per c_once < <(figures c)
both() { [ "$1" -gt 0 ] && [ "$1" = "$2" ]; } # a positive figure, the same both ways
both "$one_per" "$one_once" || fail "one object: $one_per per object, $one_once once"
[ "$inline_per" = $((2 * one_per)) ] || fail "two inline copies per object: $inline_per, not 2 x $one_per"
[ "$inline_once" = "$one_per" ] || fail "two inline copies counted once: $inline_once, not $one_per"
both "$static_per" "$static_once" || fail "static copies: $static_per, $static_once"
both "$c_per" "$c_once" || fail "C objects: $c_per, $c_once"
if "$tool" empty >/dev/null 2>err.txt; then fail "a directory without objects was measured"; fi
grep -q "empty: no object files" err.txt || fail "the error does not name the directory: $(cat err.txt)"
echo "linked_text: inline x2 $inline_per per object, $inline_once once; static $static_per both ways; C $c_per both ways"
