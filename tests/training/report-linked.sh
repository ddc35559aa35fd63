#!/usr/bin/env bash
# report-linked.sh SOURCE_DIR MLGO_EVAL RECIPE_BUILD CORPUS
#
# mlgo-eval report --linked against bench/linked_text.py on the recipe's own
# -Oz objects (RECIPE_BUILD: the code base as its build made it): the -Oz
# figures per object and with each COMDAT group counted once must be the
# same bytes, and the report's row the latter; a policy's linked total is
# what it is per object less its discarded copies (smaller); a report without
# --linked keeps the per-object figures; --best-of keeps per module the
# smaller object, as mlgo-cc does, and counts those objects' groups once;
# the text-linked measure's -Oz values add up to the once-count, in a report
# and in a pipeline choice learned under it; mlgo-eval choose does not
# compare values counted the two ways; a baseline cache without the groups
# is filled again. Usage: SOURCE_DIR MLGO_EVAL RECIPE_BUILD CORPUS.
set -euo pipefail
source_dir=$1 eval_tool=$2 objects=$3 corpus=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# "DIR<TAB>N objects<TAB>per-object .text P<TAB>COMDAT groups once O"
read -r per once < <(/usr/bin/python3 "$source_dir/bench/linked_text.py" "$objects" |
  awk -F'\t' '{sub(/.* /, "", $3); sub(/.* /, "", $4); print $3, $4}')
[ "$per" -gt "$once" ] || fail "the recipe's objects have no COMDAT copies ($per, $once)"
"$eval_tool" report inlining-oz "$corpus" --linked --no-baseline-cache \
  --values "$out/linked.tsv" >"$out/linked.md" 2>"$out/linked.log" ||
  fail "report --linked failed: $(tail -3 "$out/linked.log")"
# "NAME: per object B -> P; COMDAT groups once B -> P"
line=$(grep -E ': per object [0-9]+ -> [0-9]+; COMDAT groups once' "$out/linked.log") ||
  fail "no check line in: $(tail -3 "$out/linked.log")"
read -r e_per p_per e_once p_once < <(
  sed -E 's/.*per object ([0-9]+) -> ([0-9]+); COMDAT groups once ([0-9]+) -> ([0-9]+)/\1 \2 \3 \4/' <<<"$line")
[ "$e_per" = "$per" ] || fail "-Oz per object: report $e_per, the recipe's objects $per"
[ "$e_once" = "$once" ] || fail "-Oz COMDAT once: report $e_once, the recipe's objects $once"
[ "$p_once" -lt "$p_per" ] || fail "policy: once $p_once not below per object $p_per"
grep -q "(COMDAT once)" "$out/linked.md" || fail "the report's columns do not say COMDAT once"
grep -q "count=comdat-once" "$out/linked.tsv" || fail "the values file does not say COMDAT once"
grep -qF "| $corpus | " "$out/linked.md" || fail "no row for $corpus: $(cat "$out/linked.md")"
grep -qF "| $once | $p_once |" "$out/linked.md" ||
  fail "the row is not $once, $p_once: $(grep -F "| $corpus |" "$out/linked.md")"
"$eval_tool" report inlining-oz "$corpus" --no-baseline-cache --values "$out/plain.tsv" \
  >"$out/plain.md" 2>/dev/null
grep -qF "| $per | $p_per |" "$out/plain.md" ||
  fail "without --linked the row is not per object ($per, $p_per): $(grep -F "| $corpus |" "$out/plain.md")"
# mlgo-eval choose does not compare values counted the two ways.
if "$eval_tool" choose "linked=$out/linked.tsv" "plain=$out/plain.tsv" >/dev/null 2>"$out/choose.log"; then
  fail "choose compared linked and per-object values"
fi
grep -q "candidate plain: its values count per object, linked's the other way" "$out/choose.log" ||
  fail "choose's refusal does not say why: $(cat "$out/choose.log")"
# --best-of: the smaller object per module, then its groups once.
"$eval_tool" report inlining-oz "$corpus" --linked --best-of --no-baseline-cache \
  >"$out/best.md" 2>"$out/best.log"
read -r b_per b_once < <(sed -nE 's/.*per object [0-9]+ -> ([0-9]+); COMDAT groups once [0-9]+ -> ([0-9]+)/\1 \2/p' "$out/best.log")
if [ "$b_per" -gt "$p_per" ] || [ "$b_per" -gt "$per" ]; then
  fail "--best-of per object $b_per above the policy's $p_per or -Oz's $per"
fi
grep -qF "| $once | $b_once |" "$out/best.md" ||
  fail "--best-of row is not $once, $b_once: $(grep -F "| $corpus |" "$out/best.md")"
# --measure text-linked: each module's value against the others at -Oz; at
# -Oz they add up to the linked code, the once-count.
"$eval_tool" report inlining-oz "$corpus" --measure text-linked --no-baseline-cache \
  >"$out/measure.md" 2>"$out/measure.log" || fail "--measure text-linked: $(tail -3 "$out/measure.log")"
grep -qE "^\| $corpus \| [0-9]+ \| 0 \| $once \| " "$out/measure.md" ||
  fail "--measure text-linked's -Oz total is not $once: $(grep -F "| $corpus |" "$out/measure.md")"
# A pipeline choice learned under text-linked: its -Oz total is the
# once-count, and its pool's measures are kept apart from per-object ones.
printf '%s\n' '{"format": "mlgo-es-policy", "version": 3, "kind": "pipeline", "inputs": [],' \
  '"pipeline": {"add": [{"at": "optimizer-last", "passes": "mergefunc"}]}}' >"$out/mergefunc.json"
"$eval_tool" pipeline-search "$corpus" --program --program-search choice --task pass-pipeline \
  --measure text-linked --pool "$out/mergefunc.json" --pool-measures "$out/pool.tsv" \
  -o "$out/choice.json" >"$out/choice.log" 2>&1 || fail "pipeline-search: $(tail -3 "$out/choice.log")"
grep -q "text-linked, against the pool's first (-Oz, $once)" "$out/choice.log" ||
  fail "the choice's -Oz total is not $once: $(grep "pool's first" "$out/choice.log")"
grep -q "text-linked" "$out/pool.tsv" || fail "the pool's measures do not say text-linked"
# A baseline cache without the groups (an older cache) compiles the
# baselines again and stores them; a cache with them answers: the same line
# both times.
"$eval_tool" report inlining-oz "$corpus" --baseline-cache "$out/cache" >/dev/null 2>&1
rm -f "$out"/cache/*.comdat
for pass in refilled cached; do
  "$eval_tool" report inlining-oz "$corpus" --linked --baseline-cache "$out/cache" \
    >/dev/null 2>"$out/$pass.log"
  grep -qF "$line" "$out/$pass.log" || fail "$pass baseline cache: $(grep 'per object' "$out/$pass.log")"
done
ls "$out"/cache/*.comdat >/dev/null || fail "the baseline cache kept no groups"
echo "report --linked: -Oz $per per object, $once once (the recipe's objects agree);" \
  "inlining-oz $p_per per object, $p_once once; best of both $b_per, $b_once once"
