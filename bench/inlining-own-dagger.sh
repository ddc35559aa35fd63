#!/usr/bin/env bash
# bench/inlining-own-dagger.sh [OUT [SECONDS]]
#
# Issue 33: DAgger on the shipped policy's own training code. `inlining-oz`
# (run E) was trained on the first split's training set (BusyBox, coreutils,
# SQLite, zstd; yaml-cpp, glslang: 1111 modules) and alone makes three of its
# four C training code bases larger than -Oz (BusyBox +0.305 %, coreutils
# +0.232 %, SQLite +1.093 %): its labels were single flips measured with
# every other decision at -Oz's, and it makes many at once. Run E searched
# once from a learned policy's decisions; this round searches again and
# again from each new policy's decisions on the same code, aggregating the
# labels (DAgger, Ross et al. 2011, with the greedy search as the expert):
#
#   D0  search from -Oz                      (the expert's own states)
#   D1  search from inlining-oz's decisions  (the shipped policy's states)
#   pi1 = BC(D0 + D1)
#   D2  search from pi1's decisions;  pi2 = BC(D0 + D1 + D2)
#   D3  search from pi2's decisions;  pi3 = BC(D0 + … + D3)
#
# Each search: mlgo-eval search on the merged training code, random order,
# seed k, up to 1000 decisions per module, SECONDS of budget (default 720),
# incremental, every tried decision written (--tried). Each BC: run E's
# winning form, the mean-logit ensemble of four byte-weighted BC runs
# (bc-train --imitate-actions --outcome-weights, configs/inlining-bc.toml,
# 30 epochs, seeds 1-4, residual margin 0.3, each the epoch with the best
# held-out agreement) on one vocabulary of the traces.
#
# For the question "does it fit its own code now": each pi_k alone on the
# six training code bases (OUT/pi_k.own.md), beside inlining-oz's.
#
# The rule, written before any figure of this round was computed (the
# script copies it to RULE.txt):
#   1. candidates pi1, pi2, pi3; on the 16 validation code bases of the
#      earlier inliner rounds, alone: the fewest code bases above -Oz, then
#      the smallest total;
#   2. the winner ships as inlining-oz (the shipped one becomes
#      inlining-oz-v2) only if it has no validation code base above -Oz
#      and a total below -Oz;
#   3. test (the split's six) and the ten fresh code bases are computed
#      for the winner after the choice, never to choose.
# Resumable: a search continues from its checkpoint; finished steps are
# kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/inlining-own-dagger}"
seconds="${2:-720}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # inliner_sets, rank_inliners, decide_inliner, best_policy
sed -n '/^# The rule/,/^#      for the winner/p' "$0" | sed 's/^# //' >"$out/RULE.txt"
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$out/progress.log"; }

train=(busybox coreutils sqlite zstd yaml-cpp glslang)
inliner_sets
ensure_corpora "${train[@]}" "${validation[@]}" "${test[@]}" "${fresh[@]}"
if [ ! -f "$out/train/corpus_description.json" ]; then
  rm -rf "$out/train"
  args=()
  for name in "${train[@]}"; do args+=("$build/corpora/$name/corpus=$name"); done
  "$build/apps/mlgo-corpus" merge "${args[@]}" -o "$out/train" | tail -n 1
fi

# dagger_search K [START]: D_K, the search from START's decisions (-Oz
# without one) into $out/dK.tried.h5 and dK-flips.json.
dagger_search() {
  local k=$1 start=${2:-}
  [ -s "$out/d$k-flips.json" ] && return 0
  log "D$k: search from ${start:--Oz}, $seconds s"
  "$eval" search "$out/train" -o "$out/d$k-flips.json.part" --order random --seed "$((k + 1))" \
    --max-decisions 1000 --max-seconds "$seconds" --tried "$out/d$k.tried.h5" \
    ${start:+--start-policy "$start"} --checkpoint "$out/d$k.checkpoint" >"$out/d$k.log" 2>&1
  mv "$out/d$k-flips.json.part" "$out/d$k-flips.json"
  grep -A1 '^search:' "$out/d$k.log" | tee -a "$out/progress.log"
}

# bc_ensemble NAME TRACE…: $out/NAME.json, four byte-weighted BC runs on
# the traces, one vocabulary, their mean logits.
bc_ensemble() {
  local name=$1 seed members=() flags=()
  shift
  [ -s "$out/$name.json" ] && return 0
  log "$name: BC on $*"
  for trace in "$@"; do flags+=(--trace "$trace"); done
  [ -f "$out/$name.vocabulary.done" ] ||
    { "$eval" vocab "$@" -o "$out/$name.vocabulary" >/dev/null && touch "$out/$name.vocabulary.done"; }
  for seed in 1 2 3 4; do
    if [ ! -s "$out/$name-seed$seed.json" ]; then
      "$build/apps/bc-train" --config configs/inlining-bc.toml --seed "$seed" --residual-margin 0.3 \
        --epochs 30 --imitate-actions --outcome-weights "${flags[@]}" --vocabulary "$out/$name.vocabulary" \
        -o "$out/$name-seed$seed.h5" --overwrite --policy-output "$out/$name-seed$seed.final.json" \
        >"$out/$name-seed$seed.bc.log" 2>&1
      best_policy "$out/$name-seed$seed.h5" "$out/$name-seed$seed.json"
    fi
    members+=("$out/$name-seed$seed.json")
  done
  "$eval" ensemble "${members[@]}" -o "$out/$name.json.part" >/dev/null
  mv "$out/$name.json.part" "$out/$name.json"
}

# own NAME POLICY: POLICY alone on the six training code bases.
own() {
  inlining_report_of "$1" "$2" own "${train[@]}"
  echo "$1 on its training code: $(total "$out/$1.own.md") % ($(above "$out/$1.own.md") of 6 above)" |
    tee -a "$out/progress.log"
}

own pi0 inlining-oz
dagger_search 0
dagger_search 1 inlining-oz
traces=("$out/d0.tried.h5" "$out/d1.tried.h5")
for k in 1 2 3; do
  bc_ensemble "pi$k" "${traces[@]}"
  own "pi$k" "$out/pi$k.json"
  [ "$k" = 3 ] && break
  dagger_search "$((k + 1))" "$out/pi$k.json"
  traces+=("$out/d$((k + 1)).tried.h5")
done

rank_inliners pi1 pi2 pi3
decide_inliner
cat "$out/validation.txt"
