#!/usr/bin/env bash
# bench/pipeline-v4.sh [OUT]
#
# The pass-pipeline task's fourth round (docs/pass-pipeline.md, "More
# training modules and the cost vote"): the combined choice of pipeline and
# inliner (bench/pipeline-v3.sh's choice-comb4 pool: -Oz, the program
# search's six step pipelines and the search under inlining-oz, each with
# LLVM's heuristic and with inlining-oz) learned
#   - on the seven small training code bases as before (127 modules), and
#   - on every training code base of configs/inlining-split.toml whose
#     corpus is built (corpus/recipes/NAME.sh), a sample of $MLGO_V4_SAMPLE
#     (30) modules from each (--sample: round robin over size buckets), so
#     that the neighbours come from many code bases,
# each with the label vote and the cost vote (--vote cost), and with the cost
# vote and an IR2Vec module embedding among the features (--choice-embedding,
# a vocabulary learned on the seven small code bases); on the small set also
# from a pool widened by every single change of the structured space
# (--pool-singles). The pool is compiled once per module set
# (--pool-measures); the variants only learn.
# Every candidate is judged on validation, and with the rule fixed for this
# task before these runs (among the candidates with no validation code base
# above -Oz, the fewest modules larger) one is chosen, the shipped
# pipeline-inlining-oz (28 of 188 modules larger) among them; all are judged
# on test afterwards, for the table. Resumable: a finished step is not run
# again. Needs bench/pipeline-v3.sh's pool files ($MLGO_V3_DIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v4}"
v3="${MLGO_V3_DIR:-$build/pipeline-v3}"
sample="${MLGO_V4_SAMPLE:-30}"
sampled=()
mkdir -p "$out"
eval="$build/apps/mlgo-eval"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"

pool=()
for n in 1 2 3 4 5 6; do pool+=(--pool "$v3/program-step$n.json"); done
pool+=(--pool "$v3/combined-pipeline.json")
for f in "${pool[@]}"; do
  [ "$f" = --pool ] || [ -s "$f" ] || { echo "missing $f: run bench/pipeline-v3.sh first" >&2; exit 1; }
done
choice=(--program-search choice --inliner inlining-oz)

train=(bzip2 libpng lz4 expat zstd yaml-cpp zlib)
vocab="$out/vocab-small.json"
if [ ! -s "$vocab" ]; then
  corpora=()
  for name in "${train[@]}"; do corpora+=("$build/corpora/$name/corpus"); done
  "$eval" ir2vec-vocab "${corpora[@]}" -o "$vocab" >"$out/vocab.log" 2>&1
fi
variants() { # NAME-PREFIX ARGS…: the label vote, the cost vote, the cost vote with the embedding
  local name=$1
  shift
  search "$name-label" "${choice[@]}" --vote label "$@"
  search "$name-cost" "${choice[@]}" --vote cost "$@"
  search "$name-cost-emb" "${choice[@]}" --vote cost --choice-embedding "$vocab" "$@"
}
variants small --pool-measures "$out/small.pool.tsv" "${pool[@]}"
search singles-cost "${choice[@]}" --vote cost --pool-singles \
  --pool-measures "$out/singles.pool.tsv" "${pool[@]}"
search singles-label "${choice[@]}" --vote label --pool-singles \
  --pool-measures "$out/singles.pool.tsv" "${pool[@]}"
# Every training code base of the split whose corpus is built
# (corpus/recipes/NAME.sh; $MLGO_V4_ALL=1 insists on all of them), sampled.
mapfile -t train < <(python3 - "$build/corpora" <<'PY'
import os, sys, tomllib
names = tomllib.load(open("configs/inlining-split.toml", "rb"))["train"]
built = [n for n in names if os.path.exists(f"{sys.argv[1]}/{n}/corpus.stamp")]
print("\n".join(names if os.environ.get("MLGO_V4_ALL") == "1" else built))
PY
)
echo "wide: ${#train[@]} training code bases: ${train[*]}" | tee "$out/wide.code-bases"
variants wide --sample "$sample" --pool-measures "$out/wide.pool.tsv" "${pool[@]}"
# The inliner policy behind a module-level guard (issue 33's "safe alone"):
# a choice between -Oz with LLVM's heuristic and -Oz with inlining-oz.
for set in small wide; do
  if [ "$set" = small ]; then names=(bzip2 libpng lz4 expat zstd yaml-cpp zlib); else names=("${train[@]}"); fi
  [ "$set" = small ] || sampled=(--sample "$sample")
  for vote in label cost; do
    saved=("${train[@]}")
    train=("${names[@]}")
    search "guard-$set-$vote" "${choice[@]}" --vote "$vote" --set-size 2 "${sampled[@]}" \
      --pool-measures "$out/guard-$set.pool.tsv"
    train=("${saved[@]}")
  done
done
candidates=()
for set in small wide; do candidates+=("$set-label" "$set-cost" "$set-cost-emb"); done
candidates+=(singles-cost singles-label)
guards=(guard-small-label guard-small-cost guard-wide-label guard-wide-cost)
for name in "${candidates[@]}" "${guards[@]}"; do judge "$name" validation; done
for name in "${candidates[@]}" "${guards[@]}"; do judge "$name" test; done
# A diagnostic, used for no choice: each test module with its best of the
# wide set's alternatives (and two more), i.e. what a perfect choice gets.
if [ ! -s "$out/test-oracle.md" ]; then
  "$eval" pipeline-search pcre2 libwebp flac json-c leveldb zeromq --program "${choice[@]}" \
    --set-size 6 --minimum-gain 0 --pool "$v3/program-step5.json" --pool "$v3/combined-pipeline.json" \
    -o "$out/test-oracle.json" --markdown "$out/test-oracle.md" >"$out/test-oracle.log" 2>&1
fi
echo "tables in $out/*.md"
