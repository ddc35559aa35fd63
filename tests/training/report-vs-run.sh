#!/usr/bin/env bash
# mlgo-eval report against mlgo-eval run: the same policy on the same code
# bases must give the same total .text and -Oz bytes; with --best-of, the sum
# over modules of the smaller of the two. Usage: MLGO_EVAL CORPUS...
set -euo pipefail
eval_tool=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$eval_tool" report never "$@" --markdown "$out/report.md" >/dev/null 2>"$out/report.log"
sum_policy=0
sum_base=0
sum_best=0
for corpus in "$@"; do
  # Per-module rows: "name ok decisions size -Oz delta".
  best=$("$eval_tool" run never "$corpus" 2>/dev/null |
    awk '$2 == "ok" && NF == 6 { s += ($4 < $5 ? $4 : $5) } END { print s + 0 }')
  sum_best=$((sum_best + best))
  line=$("$eval_tool" run never "$corpus" --no-per-module 2>/dev/null | grep '^total:')
  # "total: N ok, F failed, D decisions; .text P bytes vs -Oz B (...)"
  policy=$(sed -E 's/.*\.text ([0-9]+) bytes vs -Oz ([0-9]+).*/\1/' <<<"$line")
  base=$(sed -E 's/.*\.text ([0-9]+) bytes vs -Oz ([0-9]+).*/\2/' <<<"$line")
  name=$(basename "$(dirname "$corpus")")
  row=$(grep "^| $corpus |" "$out/report.md" || true)
  [ -n "$row" ] || { echo "no row for $corpus in:"; cat "$out/report.md"; exit 1; }
  IFS='|' read -r _ _ _ _ rbase rpolicy _ <<<"$row"
  if [ "$(echo $rbase)" != "$base" ] || [ "$(echo $rpolicy)" != "$policy" ]; then
    echo "$name: report says -Oz $rbase / policy $rpolicy, run says $base / $policy"
    exit 1
  fi
  sum_policy=$((sum_policy + policy))
  sum_base=$((sum_base + base))
done
grep -q "^| \*\*total\*\* | .* | $sum_base | $sum_policy |" "$out/report.md" ||
  { echo "total row disagrees with $sum_base / $sum_policy:"; cat "$out/report.md"; exit 1; }
echo "report agrees with run: -Oz $sum_base, never $sum_policy bytes"
"$eval_tool" report never "$@" --best-of --markdown "$out/best-of.md" >/dev/null 2>"$out/best-of.log"
grep -q "^| \*\*total\*\* | .* | $sum_base | $sum_best |" "$out/best-of.md" ||
  { echo "--best-of total row disagrees with $sum_base / $sum_best:"; cat "$out/best-of.md"; exit 1; }
[ "$sum_best" -lt "$sum_base" ] && [ "$sum_best" -lt "$sum_policy" ] ||
  { echo "best of never and -Oz ($sum_best) should be below both ($sum_base, $sum_policy)"; exit 1; }
echo "report --best-of agrees with run: $sum_best bytes"
