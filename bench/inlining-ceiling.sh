#!/usr/bin/env bash
# bench/inlining-ceiling.sh [OUT [MAX_DECISIONS [SET…]]]
#
# How much an inlining policy could find on code bases it never trained on
# (issue 33's ceiling): the greedy decision search (mlgo-eval search, single
# flips from -Oz's decisions, a flip kept only where its module gets
# smaller) run on each code base of the sets of configs/inlining-split.toml
# (default: test, then validation) with MAX_DECISIONS decisions per module
# (default 200), plainly and callee-consistently. No policy is chosen from
# it: the searched flips are the code base's own, the upper end of what a
# policy that generalises perfectly from other code could carry over (a
# greedy search, not the optimum). Writes OUT/CODEBASE.MODE.json (a
# flip-set policy), .log, and OUT/ceiling.md: per code base, -Oz's .text,
# the search's change, modules smaller, compiles. Resumable: a finished
# search is kept; an interrupted one continues from its checkpoint.
# MLGO_BUILD_DIR: the mlgo-es build (default build/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-build/inlining-ceiling}
max=${2:-200}
shift $(($# > 2 ? 2 : $#))
[ $# -gt 0 ] && sets=("$@") || sets=(test validation)
build=${MLGO_BUILD_DIR:-build}
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
codebases() { # SET: the code bases of a set of the split, one per line
  sed -n "s/^$1 = \[\(.*\)\]/\1/p" configs/inlining-split.toml | tr -d '" ' | tr ',' '\n'
}
for set in "${sets[@]}"; do
  for cb in $(codebases "$set"); do
    corpus="$build/corpora/$cb/corpus"
    [ -d "$corpus" ] || { echo "$cb: no corpus at $corpus (run corpus/recipes/$cb.sh)" >&2; exit 1; }
    for mode in plain consistent; do
      name="$cb.$mode"
      [ -s "$out/$name.json" ] && continue
      extra=()
      [ "$mode" = consistent ] && extra=(--callee-consistent)
      echo "$(date +%T) $set $name: mlgo-eval search --max-decisions $max ${extra[*]}"
      "$eval" search "$corpus" -o "$out/$name.json.part" --max-decisions "$max" \
        --checkpoint "$out/$name.ckpt" "${extra[@]}" >"$out/$name.log" 2>&1
      mv "$out/$name.json.part" "$out/$name.json"
    done
  done
done
{
  echo "| set | code base | mode | search | result |"
  echo "| --- | --- | --- | --- | --- |"
  for set in "${sets[@]}"; do
    for cb in $(codebases "$set"); do
      for mode in plain consistent; do
        log="$out/$cb.$mode.log"
        [ -s "$out/$cb.$mode.json" ] || continue
        echo "| $set | $cb | $mode | $(grep -E '^search: ' "$log" | tail -1 | sed 's/^search: //') | $(grep -A1 -E '^search: ' "$log" | tail -1) |"
      done
    done
  done
} >"$out/ceiling.md"
cat "$out/ceiling.md"
