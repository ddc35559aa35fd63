#!/usr/bin/env bash
# bench/regalloc/run-cost.sh [OUT]
#
# Register-allocation eviction judged by run cost (docs/regalloc-results.md,
# "Run cost"): the eviction pipeline of docs/regalloc-results.md (a BC clone
# of LLVM's default advisor, then ES from it rewarded by the step total of
# RegAllocScore, validated on zlib), then every policy's run cost on the
# benchmark programs of configs/run-cost-split.toml against plain -O2, and
# its RegAllocScore on the same code bases, for the relation between the
# two. One step after the other (2 cores); a finished step (its output file
# exists) is not run again, so the script resumes where it stopped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/regalloc-run-cost}"
mkdir -p "$out"
apps="$build/apps"
split=configs/run-cost-split.toml
programs=(lua zstd zlib sqlite bzip2 xz ninja lz4 box2d yaml-cpp)

for r in "${programs[@]}"; do corpus/recipes/$r.sh --opt-level O2 >/dev/null; done
if [ ! -d "$out/train-O2" ]; then
  "$apps/mlgo-corpus" merge "$build/corpora/lua-O2/corpus" "$build/corpora/zstd-O2/corpus" \
    -o "$out/train-O2.part" >/dev/null
  mv "$out/train-O2.part" "$out/train-O2"
fi
if [ ! -s "$out/bc.json" ]; then
  echo "bc-train (about 2 minutes)"
  "$apps/bc-train" --config configs/regalloc-bc.toml --corpus "$out/train-O2" -j 2 \
    -o "$out/bc.h5" --policy-output "$out/bc.json.part" >"$out/bc.log" 2>&1
  mv "$out/bc.json.part" "$out/bc.json"
fi
if [ ! -s "$out/es-tot.json" ]; then
  echo "es-train from the clone, step totals (about 10 minutes)"
  "$apps/es-train" --config configs/regalloc-es.toml --corpus "$out/train-O2" \
    --initial-policy "$out/bc.json" --candidate-reward total \
    --validation-corpus "$build/corpora/zlib-O2/corpus" --steps 20 -j 2 \
    -o "$out/es-tot.h5" >"$out/es-tot.log" 2>&1
fi

# ES trained on run cost itself (es-train --programs): from es-tot, each
# candidate rewarded by the run cost of the training programs (Lua and zstd,
# built through mlgo-cc and run under cachegrind, about 20 s a job), the best
# chosen by the validation programs' run cost. Fixed before it ran: 4
# directions, the rest of configs/regalloc-es.toml, validation every 2 steps,
# 10 steps or 70 minutes.
if [ ! -s "$out/es-rc.json" ]; then
  echo "es-train on run cost (about an hour)"
  resume=()
  [ -s "$out/es-rc.h5" ] && resume=(--resume "$out/es-rc.h5")
  if [ ${#resume[@]} -eq 0 ]; then
    "$apps/es-train" --config configs/regalloc-es.toml --programs lua,zstd \
      --validation-programs zlib,sqlite --initial-policy "$out/es-tot.json" --directions 4 \
      --validation-interval 2 --steps 10 --max-seconds 4200 -o "$out/es-rc.h5" \
      --policy-output "$out/es-rc.json.part" >"$out/es-rc.log" 2>&1
  else
    "$apps/es-train" "${resume[@]}" --max-seconds 4200 >>"$out/es-rc.log" 2>&1
  fi
  mv "$out/es-rc.json.part" "$out/es-rc.json"
fi

# Run cost: validation programs first (the choice), then test, each policy.
for policy in bc es-tot es-rc; do
  for set in validation test train; do
    [ -s "$out/$policy.run-cost.$set.md" ] && continue
    echo "run cost: $policy on $set"
    "$apps/mlgo-eval" run-cost "$out/$policy.json" --task regalloc-eviction --split "$split" \
      --set "$set" --wall-runs 5 --work-dir "$(realpath "$build")/run-cost" \
      --markdown "$out/$policy.run-cost.$set.md.part" >"$out/$policy.run-cost.$set.log" 2>&1 || true
    mv "$out/$policy.run-cost.$set.md.part" "$out/$policy.run-cost.$set.md"
  done
done
# RegAllocScore on each program's -O2 code base, for the relation.
for policy in bc es-tot es-rc; do
  [ -s "$out/$policy.score.md" ] && continue
  echo "RegAllocScore: $policy"
  "$apps/mlgo-eval" report "$out/$policy.json" --task regalloc-eviction \
    "${programs[@]/%/-O2}" --markdown "$out/$policy.score.md.part" >"$out/$policy.score.log" 2>&1
  mv "$out/$policy.score.md.part" "$out/$policy.score.md"
done
echo "tables in $out/*.md"
