#!/usr/bin/env bash
# mlgo-eval report against mlgo-eval run: the same policy on the same code
# bases must give the same total .text and -Oz bytes. Usage: MLGO_EVAL CORPUS...
set -euo pipefail
eval_tool=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$eval_tool" report never "$@" --markdown "$out/report.md" >/dev/null 2>"$out/report.log"
sum_policy=0
sum_base=0
for corpus in "$@"; do
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
