#!/usr/bin/env bash
# bench/linked-size.sh OUT RECIPE POLICY…
#
# What a policy does to the code a linker keeps, against plain -Oz: RECIPE
# is built from source once with plain clang-22 -Oz and once through
# mlgo-cc per POLICY (a file or a shipped name; bench/deploy/build-once.sh),
# and each build's objects are measured by bench/linked_text.py: the
# per-object .text sum (what mlgo-eval's text-size measure adds up) and the
# same with every COMDAT group counted once (what a linker keeps), with the
# .text of every program and shared library the build linked. OUT/RECIPE.tsv
# gets a line per build. C++ inline functions and template instances are
# emitted into every object that uses them and kept once by the linker, so
# a policy that folds or inlines such a copy away in one object shrinks the
# first figure and not the others.
set -euo pipefail
[ $# -ge 3 ] || {
  sed -n '2,13p' "$0"
  exit 2
}
out=$(realpath -m "$1") recipe=$2
shift 2
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p "$out"
tsv="$out/$recipe.tsv"
printf 'build\tobjects\tper-object .text\tCOMDAT groups once\tlinked .text\n' >"$tsv"
for policy in -Oz "$@"; do
  label=$(basename -- "$policy" | sed 's/\.\(json\|policy\)$//')
  work="$out/$recipe.$label"
  if [ "$policy" = -Oz ]; then
    bash bench/deploy/build-once.sh "$recipe" "$work"
  else
    bash bench/deploy/build-once.sh "$recipe" "$work" "$policy"
  fi
  # The programs and shared libraries the build linked, their .text summed.
  linked=0
  while IFS= read -r file; do
    kind=$({ readelf -h "$file" 2>/dev/null || true; } | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p') # scripts too
    [ "$kind" = EXEC ] || [ "$kind" = DYN ] || continue
    size=$(size -A "$file" | awk '$1 == ".text" {print $2}')
    linked=$((linked + ${size:-0}))
  done < <(find "$work" -type f -perm -u+x ! -path '*/CMakeFiles/*' | sort)
  measured=$(bench/linked_text.py "$work" | cut -f2-)
  printf '%s\t%s\t%s\n' "$label" "$(echo "$measured" | sed 's/ objects//; s/per-object .text //; s/COMDAT groups once //')" \
    "$linked" >>"$tsv"
  rm -rf "$work"
done
column -t -s$'\t' "$tsv"
