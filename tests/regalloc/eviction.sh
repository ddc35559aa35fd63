#!/usr/bin/env bash
# The register allocator's eviction task (--task regalloc-eviction) on a
# real -O2 corpus:
#  1. a short es-train run from a random candidate-scoring MLP finishes,
#     every module compiling under every candidate, rewarded by LLVM's
#     RegAllocScore against plain -O2's;
#  2. the same policy twice gives the same sizes and scores;
#  3. the trained policy changes the code and the score of at least one
#     module against plain -O2;
#  4. bc-train clones the default advisor from its in-process trace (better
#     held-out agreement than always answering the commonest candidate), and
#     ppo-train runs an iteration from that clone;
#  5. the in-process measure (LLVM's RegAllocScore after allocation, our
#     code generation pipeline) gives objects of clang's own .text sizes,
#     the same score twice, and each module's score equals the reference
#     computed from clang-22's own MIR (tests/regalloc/ScoreReference.cpp);
#  6. the in-process workers (LLVM's ML advisor answered by the worker's own
#     thread) give the same decisions and sizes as clang processes (by
#     .text size: the score is measured in-process only).
# Usage: eviction.sh BUILD_DIR O2_CORPUS WORK_DIR
set -euo pipefail
build=$1
corpus=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() {
  echo "FAIL: $*"
  exit 1
}
task=(--task regalloc-eviction -j 2)

echo "== 1. es-train on the eviction task"
"$build/apps/es-train" --corpus "$corpus" "${task[@]}" --steps 2 --directions 2 --residual-margin 0 \
  --modules-per-step 4 --hidden 8 --vocabulary-quantiles 20 --sigma 0.5 --seed 4 -o es.h5 \
  >es.log 2>&1 || { cat es.log; fail "es-train --task regalloc-eviction failed"; }
grep -q "scoring 33 candidates" es.log || fail "not a candidate-scoring policy: $(grep training es.log)"
grep -q "^done: 2 steps" es.log || fail "es-train did not finish its steps"
grep -q "regalloc-score vs -O2" es.log || fail "the run does not name its measure"
failed=$(sed -n 's/^done: .* compilations, \([0-9]*\) failed.*/\1/p' es.log)
[ "$failed" = 0 ] || fail "$failed compilations failed under eviction policies"

/usr/bin/python3 -c "
import h5py
open('es.json', 'w').write(h5py.File('es.h5', 'r')['/policies/final/json'][0].decode())"

echo "== 2. the same policy twice"
"$build/apps/mlgo-eval" run es.json "$corpus" "${task[@]}" >eval-a.txt
"$build/apps/mlgo-eval" run es.json "$corpus" "${task[@]}" --no-baseline-cache >eval-b.txt
strip() { grep -v "^backend:" "$1" | sed 's/; [0-9.]* s$//'; }
diff <(strip eval-a.txt) <(strip eval-b.txt) || fail "two evaluations of one policy differ"
grep -q "^total: .* 0 failed" eval-a.txt || fail "modules failed: $(tail -2 eval-a.txt)"

echo "== 3. the policy changes code and score"
changed=$(awk '$2 == "ok" && $4 != $5' eval-a.txt | wc -l)
rescored=$(awk '$2 == "ok" && $7 != $8' eval-a.txt | wc -l)
echo "modules whose .text differs from -O2: $changed, whose score differs: $rescored"
[ "$changed" -gt 0 ] || fail "the eviction policy changed no module's code"
[ "$rescored" -gt 0 ] || fail "the eviction policy changed no module's RegAllocScore"

echo "== 4. bc-train clones the default advisor, ppo-train starts from the clone"
"$build/apps/bc-train" --corpus "$corpus" "${task[@]}" --epochs 20 --hidden 32 --seed 1 \
  -o bc.h5 >bc.log 2>&1 || { cat bc.log; fail "bc-train --task regalloc-eviction failed"; }
summary=$(grep "^done:" bc.log)
echo "$summary"
agreement=$(sed -n 's/.*held-out agreement \([0-9.]*\)%.*/\1/p' <<<"$summary")
majority=$(sed -n 's/.*majority label: \([0-9.]*\)%.*/\1/p' <<<"$summary")
awk -v a="$agreement" -v m="$majority" 'BEGIN {exit !(a > m)}' ||
  fail "the clone agrees with the default advisor ($agreement %) no more than the commonest label ($majority %)"
"$build/apps/ppo-train" --corpus "$corpus" "${task[@]}" --iterations 1 --initial-policy bc.json \
  --updates-per-iteration 0 --epochs 1 --minibatch-size 512 -o ppo.h5 >ppo.log 2>&1 || { cat ppo.log; fail "ppo-train --task regalloc-eviction failed"; }
grep -q "^done: 1 iterations.* 0 failed" ppo.log || fail "ppo-train: $(grep '^done' ppo.log)"
echo "== 5. the in-process RegAllocScore measure: clang's own -O2 objects, a stable score"
"$build/apps/mlgo-inprocess-worker" --measure-regalloc "$corpus" >measure-a.tsv
"$build/apps/mlgo-inprocess-worker" --measure-regalloc "$corpus" >measure-b.tsv
diff measure-a.tsv measure-b.tsv || fail "two measures of the same modules differ"
# module -> -O2 .text bytes, from clang-22 -cc1 (mlgo-eval's baseline column)
awk '$2 == "ok" {print $1 "\t" $5}' eval-a.txt | sort >clang-sizes.tsv
cut -f1,4 measure-a.tsv | sort >measure-sizes.tsv
diff clang-sizes.tsv measure-sizes.tsv ||
  fail "the in-process pipeline's objects differ from clang's (.text bytes above)"
awk -F'\t' '$2 <= 0 && $4 > 1000 {bad = 1} END {exit bad}' measure-a.tsv ||
  fail "a module with code scored 0"
# The reference: clang-22 itself stops after the register rewriter and
# writes MIR; LLVM's calculateRegAllocScore over that MIR's functions.
mkdir -p mir
find "$corpus" -name '*.cmd' | sort >commands.txt
while read -r cmd; do
  bitcode=${cmd%.cmd}.bc
  module=${cmd#"$corpus"/}
  module=${module%.cmd}
  mkdir -p "mir/$(dirname "$module")"
  mapfile -d '' arguments <"$cmd"
  /usr/lib/llvm-22/bin/clang "${arguments[@]}" -x ir "$bitcode" \
    -mllvm -stop-after=virtregrewriter -o "mir/$module.mir" 2>/dev/null ||
    fail "clang-22 could not stop after the rewriter on $module"
done <commands.txt
(cd mir && find . -name '*.mir' | sort | xargs "$build/tests/regalloc-score-reference") |
  sed 's|^\./||; s|\.mir\t|\t|' | sort >reference.tsv
cut -f1,2 measure-a.tsv | sort >measured.tsv
join -t $'\t' measured.tsv reference.tsv | awk -F'\t' '
  { d = $2 - $3; if (d < 0) d = -d; tol = 1e-9 * ($3 > 1 ? $3 : 1)
    if (d > tol) { print "score of " $1 ": " $2 " in-process, " $3 " from clang-22 MIR"; bad = 1 } }
  END { exit bad }' || fail "in-process scores differ from the reference computation"
[ "$(wc -l <reference.tsv)" = "$(wc -l <measure-a.tsv)" ] || fail "not every module has a reference score"
echo "modules: $(wc -l <measure-a.tsv), total score $(awk -F'\t' '{s += $2} END {print s}' measure-a.tsv)"
echo "== 6. backend parity: clang processes and in-process workers decide and compile alike"
for backend in clang inprocess; do
  "$build/apps/mlgo-eval" run es.json "$corpus" "${task[@]}" --backend "$backend" \
    --measure text-size --no-baseline-cache >"parity-$backend.txt"
done
diff <(strip parity-clang.txt) <(strip parity-inprocess.txt) ||
  fail "the in-process backend's eviction results differ from clang's"
# The default advisor's choice exists in-process only, and the refusal says so.
"$build/apps/mlgo-eval" run heuristic "$corpus" "${task[@]}" --backend clang \
  --measure text-size >echo-clang.txt 2>&1 && fail "the default advisor was echoed in clang processes"
grep -q "the in-process backend adds it" echo-clang.txt ||
  fail "the clang backend's refusal does not say where the default comes from: $(grep -m1 mismatch echo-clang.txt)"
echo "PASS"
