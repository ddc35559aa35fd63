#!/usr/bin/env bash
# bench/pipeline-v5.sh [OUT]
#
# The pass-pipeline task's fifth round (docs/pass-pipeline.md, "Choosers
# outside the tool, and the set at build time"):
#   1. the learning data of bench/pipeline-v4.sh's wide set and of the
#      validation code bases written out (--choice-data; no compile for the
#      wide set, whose pool measures v4 stored; the pool compiled once on
#      validation), and other choosers tried on it outside the tool
#      (bench/choice-models.py: leave one code base out on training, and
#      validation);
#   2. every v4 candidate on validation as two build-time deployments:
#      behind mlgo-cc --mlgo-best-of (policy or -Oz per object, two compiles)
#      and --mlgo-best-of-set (every alternative of the choice's set, one
#      compile each). The rule, fixed before any test figure was seen: per
#      deployment, the smallest validation total (no module can be larger
#      than -Oz behind either);
#   3. the chosen ones, and the shipped pipeline-inlining-oz, on test;
#   4. what each deployment costs a build (Lua from source, bench/paired-time.sh).
# Resumable: a finished step is not run again. Needs bench/pipeline-v4.sh's
# outputs ($MLGO_V4_DIR) and bench/pipeline-v3.sh's pool files ($MLGO_V3_DIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v5}"
v3="${MLGO_V3_DIR:-$build/pipeline-v3}"
v4="${MLGO_V4_DIR:-$build/pipeline-v4}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"

pool=()
for n in 1 2 3 4 5 6; do pool+=(--pool "$v3/program-step$n.json"); done
pool+=(--pool "$v3/combined-pipeline.json")
choice=(--program --program-search choice --inliner inlining-oz --vote cost)

# 1. The learning data.
read -r -a wide < <(sed 's/^wide: [0-9]* training code bases: //' "$v4/wide.code-bases")
if [ ! -s "$out/wide.data.tsv" ]; then
  "$eval" pipeline-search "${wide[@]}" "${choice[@]}" --sample "${MLGO_V4_SAMPLE:-30}" \
    --pool-measures "$v4/wide.pool.tsv" "${pool[@]}" -o "$out/wide-data.json" \
    --choice-data "$out/wide.data.tsv" >"$out/wide-data.log" 2>&1
fi
if [ ! -s "$out/validation.data.tsv" ]; then
  "$eval" pipeline-search lua xz box2d ninja "${choice[@]}" \
    --pool-measures "$out/validation.pool.tsv" "${pool[@]}" -o "$out/validation-data.json" \
    --choice-data "$out/validation.data.tsv" >"$out/validation-data.log" 2>&1
fi
[ -s "$out/choice-models.txt" ] ||
  /usr/bin/python3 bench/choice-models.py "$out/wide.data.tsv" "$out/validation.data.tsv" \
    >"$out/choice-models.txt"

# 2. and 3. The deployments on validation, then the chosen ones on test.
report() { # NAME POLICY MODE SET
  [ -s "$out/$1.$3.$4.md" ] && return 0
  "$eval" report "$2" --task pass-pipeline --split configs/inlining-split.toml --set "$4" \
    "--$3" --markdown "$out/$1.$3.$4.md.part" --values "$out/$1.$3.$4.values" \
    >"$out/$1.$3.$4.log" 2>&1
  mv "$out/$1.$3.$4.md.part" "$out/$1.$3.$4.md"
}
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # total()
candidates=(small-label small-cost small-cost-emb singles-cost singles-label wide-label wide-cost
  wide-cost-emb)
for mode in best-of best-of-set; do
  report shipped pipeline-inlining-oz-v1 "$mode" validation
  best="" bestTotal=""
  for name in "${candidates[@]}"; do
    report "$name" "$v4/$name.json" "$mode" validation
    t=$(total "$out/$name.$mode.validation.md")
    # The smallest total; the earlier candidate on a tie.
    if [ -z "$best" ] || awk -v a="$t" -v b="$bestTotal" 'BEGIN {exit !(a < b)}'; then
      best=$name bestTotal=$t
    fi
  done
  echo "$mode: $best ($bestTotal % on validation)" | tee "$out/$mode.chosen"
  report "$best" "$v4/$best.json" "$mode" test
  report shipped pipeline-inlining-oz-v1 "$mode" test
done

# 3b. Bytes against compiles per object: the greedy sets of 2, 3, 5 and 6
# from both pools (free from the stored measures), with --best-of-set on
# validation, and at each size the one validation prefers on test.
curve="$out/set-size"
mkdir -p "$curve"
small=(bzip2 libpng lz4 expat zstd yaml-cpp zlib)
for size in 2 3 5 6; do
  for set in wide singles; do
    name="$set-$size"
    if [ ! -s "$curve/$name.json" ]; then
      if [ "$set" = wide ]; then
        from=("${wide[@]}" --sample "${MLGO_V4_SAMPLE:-30}" --pool-measures "$v4/wide.pool.tsv")
      else
        from=("${small[@]}" --pool-singles --pool-measures "$v4/singles.pool.tsv")
      fi
      "$eval" pipeline-search "${from[@]}" "${choice[@]}" "${pool[@]}" --set-size "$size" \
        --minimum-gain 0 -o "$curve/$name.json" --markdown "$curve/$name.md" >"$curve/$name.log" 2>&1
    fi
    out="$curve" report "$name" "$curve/$name.json" best-of-set validation
  done
  w=$(total "$curve/wide-$size.best-of-set.validation.md")
  g=$(total "$curve/singles-$size.best-of-set.validation.md")
  best=wide-$size
  awk -v a="$g" -v b="$w" 'BEGIN {exit !(a < b)}' && best=singles-$size
  out="$curve" report "$best" "$curve/$best.json" best-of-set test
done

# 4. Build cost: Lua from source, paired against plain -Oz.
bench() { # NAME ENVIRONMENT POLICY
  [ -s "$out/cost-$1.txt" ] && return 0
  bench/paired-time.sh 3 "env $2 bash bench/deploy/build-once.sh lua /tmp/fb-$1 $3" \
    "bash bench/deploy/build-once.sh lua /tmp/fb-plain" >"$out/cost-$1.txt.part" 2>&1
  mv "$out/cost-$1.txt.part" "$out/cost-$1.txt"
}
bench best-of MLGO_BEST_OF=1 pipeline-inlining-oz-best-of
bench best-of-set MLGO_BEST_OF_SET=1 pipeline-inlining-oz-set
echo "tables in $out/*.md, costs in $out/cost-*.txt"
