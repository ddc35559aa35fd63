#!/usr/bin/env bash
# The pass-pipeline task's ES on real code (CI's "short ES run"): sep-CMA-ES
# over the structured space on zlib, one step, then resumed from its
# checkpoint for a second, with every cached pipeline compiled again
# (--verify-cache). The policy it writes, compiled by mlgo-eval report, must
# give exactly the total the ES claimed for it, and never more than -Oz's.
# Usage: pipeline-es.sh MLGO-EVAL ZLIB-CORPUS OUT
set -euo pipefail
eval=$1 corpus=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
fail() { echo "pipeline-es: $*" >&2; exit 1; }
es() {
  "$eval" pipeline-search --program "$corpus" --program-search es --cma-population 4 \
    --checkpoint "$out/es.ckpt" --verify-cache -o "$out/es.json" --markdown "$out/es.md" "$@"
}
es --steps 1 >"$out/first.log" 2>&1 || { cat "$out/first.log"; fail "the first step failed"; }
es --steps 2 >"$out/second.log" 2>&1 || { cat "$out/second.log"; fail "the resumed step failed"; }
grep -q "resumed after step 0 of $out/es.ckpt" "$out/es.md" || fail "the second run did not resume"
grep -q '^| 1 | 4 | ' "$out/es.md" || fail "no step 1 in es.md"
claimed=$(sed -n 's/^best: .*: total \([0-9]*\) .*/\1/p' "$out/es.md")
[ -n "$claimed" ] || fail "no best total in es.md"
# A checkpoint of another run is refused.
if es --steps 2 --seed 7 >"$out/other.log" 2>&1; then fail "a checkpoint of another seed was resumed"; fi
grep -q "from another run" "$out/other.log" || fail "no reason for refusing the checkpoint"
"$eval" report "$out/es.json" --task pass-pipeline "$corpus" --values "$out/report.values" \
  >"$out/report.log" 2>&1 || { cat "$out/report.log"; fail "the report failed"; }
read -r _ modules failed baseline policy _ < <(grep -v '^#' "$out/report.values")
[ "$failed" = 0 ] || fail "$failed modules failed with the ES's policy"
[ "$policy" = "$claimed" ] || fail "the report gives $policy, the ES claimed $claimed"
[ "$policy" -le "$baseline" ] || fail "the ES's policy ($policy) is above -Oz ($baseline)"
echo "pipeline-es: ok ($modules modules, -Oz $baseline, ES $policy)"
