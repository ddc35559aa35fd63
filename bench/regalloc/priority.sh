#!/usr/bin/env bash
# bench/regalloc/priority.sh [OUT]
#
# The live-range priority task by run cost (docs/regalloc-results.md): a
# constant priority policy (every live range alike, the toy task's only
# policy without training) deployed through mlgo-cc --mlgo-priority-policy
# on the benchmark programs of configs/run-cost-split.toml, against plain
# -O2. Resumable: a finished table is not measured again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/regalloc-run-cost}"
mkdir -p "$out"
echo '{"format":"mlgo-es-policy","version":2,"kind":"constant","inputs":[],"advice":1}' \
  >"$out/priority-constant.json"
for set in validation test train; do
  [ -s "$out/priority-constant.run-cost.$set.md" ] && continue
  echo "run cost: priority-constant on $set"
  "$build/apps/mlgo-eval" run-cost "$out/priority-constant.json" --task regalloc-priority \
    --split configs/run-cost-split.toml --set "$set" --wall-runs 5 \
    --work-dir "$(realpath "$build")/run-cost" \
    --markdown "$out/priority-constant.run-cost.$set.md.part" \
    >"$out/priority-constant.run-cost.$set.log" 2>&1
  mv "$out/priority-constant.run-cost.$set.md.part" "$out/priority-constant.run-cost.$set.md"
done
echo "tables in $out/priority-constant.run-cost.*.md"
