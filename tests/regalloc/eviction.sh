#!/usr/bin/env bash
# The register allocator's eviction task (es-train/mlgo-eval --task
# regalloc-eviction) on a real -O2 corpus with clang-22 processes:
#  1. a short es-train run from a random candidate-scoring MLP finishes,
#     every module compiling under every candidate;
#  2. the same policy twice gives the same sizes (deterministic objects);
#  3. the trained policy changes the code of at least one module against
#     plain -O2, and the neutral policy's recorded trace holds 33-wide rows;
#  4. ppo-train and bc-train refuse the task with a reason;
#  5. the in-process measure (LLVM's RegAllocScore after allocation, our
#     code generation pipeline) gives objects of clang's own .text sizes
#     and the same score twice;
#  6. the in-process workers (LLVM's ML advisor answered by the worker's own
#     thread) give the same decisions and sizes as clang processes.
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
"$build/apps/es-train" --corpus "$corpus" "${task[@]}" --steps 2 --directions 2 \
  --modules-per-step 4 --hidden 8 --vocabulary-quantiles 20 --sigma 0.5 --seed 4 -o es.h5 \
  >es.log 2>&1 || { cat es.log; fail "es-train --task regalloc-eviction failed"; }
grep -q "scoring 33 candidates" es.log || fail "not a candidate-scoring policy: $(grep training es.log)"
grep -q "^done: 2 steps" es.log || fail "es-train did not finish its steps"
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

echo "== 3. the policy changes code"
changed=$(awk '$2 == "ok" && $4 != $5' eval-a.txt | wc -l)
echo "modules whose .text differs from -O2: $changed"
[ "$changed" -gt 0 ] || fail "the eviction policy changed no module's code"

echo "== 4. ppo-train and bc-train refuse the task"
if "$build/apps/ppo-train" --corpus "$corpus" "${task[@]}" --iterations 1 --hidden 8 \
  --vocabulary-quantiles 20 -o ppo.h5 >ppo.log 2>&1; then
  fail "ppo-train accepted the eviction task"
fi
grep -q "candidate-scoring policies" ppo.log || fail "ppo-train's refusal: $(tail -1 ppo.log)"
if "$build/apps/bc-train" --corpus "$corpus" "${task[@]}" --epochs 1 -o bc.h5 >bc.log 2>&1; then
  fail "bc-train accepted the eviction task"
fi
grep -q "include-default" bc.log || fail "bc-train's refusal: $(tail -1 bc.log)"
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
echo "modules: $(wc -l <measure-a.tsv), total score $(awk -F'\t' '{s += $2} END {print s}' measure-a.tsv)"
echo "== 6. backend parity: clang processes and in-process workers decide and compile alike"
for backend in clang inprocess; do
  "$build/apps/mlgo-eval" run es.json "$corpus" "${task[@]}" --backend "$backend" \
    --no-baseline-cache >"parity-$backend.txt"
done
diff <(strip parity-clang.txt) <(strip parity-inprocess.txt) ||
  fail "the in-process backend's eviction results differ from clang's"
echo "PASS"
