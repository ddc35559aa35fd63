#!/usr/bin/env bash
# Training across machines, tested on this one (OpenMPI, oversubscribed, as
# root when CI is root): on the real zlib corpus,
#  1. es-train under `mpirun -np 3` writes the same run file as alone
#     (mlgo-results diff: every number, timings and how jobs were answered
#     aside);
#  2. ppo-train, bc-train (recording its trace on the ranks) and mlgo-eval
#     likewise;
#  2c. an IR2Vec vocabulary (a process-global LLVM option) reaches every
#     rank: the traced decisions, embeddings included, equal one process's;
#  3. a non-trainer rank killed mid-run ends the whole job, mpirun naming the
#     rank, and --resume (under mpirun -np 2) ends exactly where an
#     uninterrupted run ends;
#  3b. a rank stopped with SIGSTOP is noticed within --rank-deadline: the job
#     ends naming the rank and host, --resume continues, and the next run
#     reclaims the scratch directories the ended job left;
#  4. ranks that only wait for jobs do not spin: with a stand-in compiler that
#     sleeps, a serving rank's CPU time is a small share of the run's wall time.
# Usage: mpi.sh BUILD_DIR CORPUS_DIR WORK_DIR
set -euo pipefail
build=$1
zlib=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
es=$build/apps/es-train
ppo=$build/apps/ppo-train
mpi() { mpirun --oversubscribe --bind-to none -np "$@"; }
# Same seed and config: the same run (mlgo-results diff leaves timings out);
# also left out: where and how jobs ran (workers per rank, the output name,
# and the counts of cached and replayed jobs, which depend on scheduling).
compare() {
  "$build/apps/mlgo-results" diff "$@" --ignore workers output policy-output overwrite cache_hits \
    cache_lookups replays replays_verified full_compiles
}
fail() {
  echo "FAIL: $*"
  exit 1
}
# rank_after_step2 LOG RANK: the pid of es-train's rank RANK once LOG shows
# step 2 (empty if it never does).
rank_after_step2() {
  for _ in $(seq 1 600); do
    if grep -q "^step 2/" "$1"; then
      local found=""
      for p in $(pgrep -f "$es" || true); do
        if tr '\0' '\n' </proc/"$p"/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
          found=$p
        fi
      done
      echo "$found"
      return
    fi
    sleep 0.1
  done
}

es_args=(--corpus "$zlib" --directions 3 --modules-per-step 4 --hidden 8 --vocabulary-quantiles 20
         --learning-rate 0.05 --seed 5)

echo "== 1. es-train alone and on 3 ranks"
"$es" "${es_args[@]}" --steps 3 -j 2 -o es-1.h5 >es-1.log
mpi 3 "$es" "${es_args[@]}" --steps 3 -j 1 -o es-3.h5 >es-3.log
grep -q "^cluster: 3 MPI ranks" es-3.log || fail "no cluster summary in es-3.log"
compare es-1.h5 es-3.h5 || fail "es-train on 3 ranks differs from es-train alone"

echo "== 2. ppo-train alone and on 3 ranks"
ppo_args=(--corpus "$zlib" --iterations 3 --modules-per-iteration 6 --hidden 8
          --vocabulary-quantiles 20 --seed 3)
"$ppo" "${ppo_args[@]}" -j 2 -o ppo-1.h5 >ppo-1.log
mpi 3 "$ppo" "${ppo_args[@]}" -j 1 -o ppo-3.h5 >ppo-3.log
compare ppo-1.h5 ppo-3.h5 || fail "ppo-train on 3 ranks differs from ppo-train alone"

echo "== 2b. bc-train's trace recording and mlgo-eval, alone and on 3 ranks"
bc=(--corpus "$zlib" --epochs 2 --hidden 8 --vocabulary-quantiles 20 --seed 2)
mkdir -p one three
(cd one && "$build/apps/bc-train" "${bc[@]}" -j 2 -o bc.h5 >bc.log)
(cd three && mpi 3 "$build/apps/bc-train" "${bc[@]}" -j 1 -o bc.h5 >bc.log)
compare one/bc.h5 three/bc.h5 || fail "bc-train on 3 ranks differs from bc-train alone"
policy=$(cd one && pwd)/bc.json
"$build/apps/mlgo-eval" run "$policy" "$zlib" -j 2 | grep -v "^backend:" | sed 's/; [0-9.]* s$//' >eval-1.txt
mpi 3 "$build/apps/mlgo-eval" run "$policy" "$zlib" -j 1 | grep -v "^backend:" |
  sed 's/; [0-9.]* s$//' >eval-3.txt
diff eval-1.txt eval-3.txt || fail "mlgo-eval on 3 ranks reports other sizes"

echo "== 2c. process-global LLVM options reach the ranks (IR2Vec embeddings)"
"$build/apps/mlgo-eval" ir2vec-vocab "$zlib" -o vocab.json >/dev/null
"$build/apps/mlgo-eval" run heuristic "$zlib" -j 2 --no-per-module --ir2vec-vocabulary vocab.json \
  --trace emb-1.h5 >/dev/null
mpi 3 "$build/apps/mlgo-eval" run heuristic "$zlib" -j 1 --no-per-module \
  --ir2vec-vocabulary vocab.json --trace emb-3.h5 >/dev/null
/usr/bin/python3 - <<'PY' || fail "the ranks' decisions lack the IR2Vec features rank 0 compiles with"
import sys, h5py, numpy
def decisions(path):
    t = h5py.File(path, "r")
    names = [n.decode() for n in t["/features/name"][()]]
    return names, numpy.asarray(t["/decisions/observations"][()])
a_names, a = decisions("emb-1.h5")
b_names, b = decisions("emb-3.h5")
assert any("embedding" in n for n in a_names), a_names
same = a_names == b_names and a.shape == b.shape and numpy.array_equal(a, b)
print("embedding features on every rank:", same)
sys.exit(0 if same else 1)
PY

echo "== 3. a rank killed mid-run, then --resume"
long=("${es_args[@]}" --steps 6 --no-replay)
"$es" "${long[@]}" -j 2 -o whole.h5 >whole.log
set +e
mpi 3 "$es" "${long[@]}" -j 1 -o killed.h5 >killed.log 2>&1 &
job=$!
set -e
victim=$(rank_after_step2 killed.log 2)
[ -n "$victim" ] || fail "rank 2 not found after step 2"
kill -9 "$victim"
set +e
wait "$job"
status=$?
set -e
[ "$status" -ne 0 ] || fail "the job went on after losing rank 2"
grep -q "rank 2" killed.log || fail "the job's end does not name rank 2: $(tail -5 killed.log)"
# Rank 0's own note ("the MPI job is ending") is written as mpirun tears the
# job down, and mpirun may stop forwarding output first (CI lost it once): it
# is reported, not required. What matters is checked: the job ended, named the
# lost rank, and its run file continues to the uninterrupted run's result.
if grep -q "the MPI job is ending" killed.log; then
  echo "rank 0 said the MPI job is ending"
else
  echo "note: rank 0's note did not reach the log before mpirun ended the job"
fi
mpi 2 "$es" --resume killed.h5 -j 1 >resumed.log
compare whole.h5 killed.h5 || fail "killed + resumed differs from the uninterrupted run"

echo "== 3b. a rank that stops answering (SIGSTOP): noticed within --rank-deadline"
rm -rf shm && mkdir -p shm
set +e
mpi 2 "$es" "${es_args[@]}" --steps 40 --no-replay -j 1 --timeout 5 --rank-deadline 6 --scratch "$PWD/shm" \
  -o stopped.h5 >stopped.log 2>&1 &
job=$!
set -e
victim=$(rank_after_step2 stopped.log 1)
[ -n "$victim" ] || fail "rank 1 not found after step 2"
kill -STOP "$victim"
stopped_at=$(date +%s)
set +e
wait "$job"
status=$?
set -e
waited=$(($(date +%s) - stopped_at))
[ "$status" -ne 0 ] || fail "the job went on with a stopped rank"
[ "$waited" -le 30 ] || fail "the job took $waited s to end after rank 1 stopped (deadline 6 s)"
grep -q "MPI rank 1 on $(hostname).*has sent nothing for [0-9]* s (--rank-deadline" stopped.log ||
  fail "the job's end does not name rank 1 and its host: $(tail -5 stopped.log)"
finished=$(grep -c "^step " stopped.log)
mpi 2 "$es" --resume stopped.h5 -j 1 --scratch "$PWD/shm" >stopped-resumed.log 2>&1 ||
  fail "--resume after the stopped rank failed: $(tail -3 stopped-resumed.log)"
grep -q "note: removed [0-9]* scratch directories of processes that no longer run" stopped-resumed.log ||
  fail "the next run did not reclaim the ended job's scratch directories"
leftover=$(ls -A shm)
[ -z "$leftover" ] || fail "left in the scratch directory after the resumed run: $leftover"
echo "rank 1 stopped after step $finished: the job ended in $waited s naming it; --resume finished and reclaimed the scratch"

echo "== 4. a serving rank does not busy-poll"
"$build/apps/mlgo-eval" run heuristic "$zlib" -j 1 --no-per-module --trace times.h5 >/dev/null
/usr/bin/python3 - <<'PY'
import h5py
t = h5py.File("times.h5", "r")
with open("times.tsv", "w") as f:
    for n in t["/modules/name"][()]:
        f.write(f"0.2\t{n.decode()}\n")  # 200 ms a job, no CPU
# The stand-in sends no features to learn: start from a policy.
run = h5py.File("es-1.h5", "r")
open("start.json", "w").write(run["/policies/final/json"][0].decode())
PY
# Each rank's times in a file of its own: ranks writing to one stream at
# exit interleave their lines.
rm -f cpu-*.log
MLGO_STANDIN_COMPILER=$PWD/times.tsv mpi 3 sh -c \
  'exec /usr/bin/time -f "rank-cpu %U %S %e" -o "cpu-$OMPI_COMM_WORLD_RANK.log" "$@"' sh "$es" \
  --corpus "$zlib" --directions 3 --modules-per-step 4 --initial-policy start.json --steps 6 --no-replay --no-baseline-cache -j 2 -o standin.h5 2>cpu.log >/dev/null
cat cpu-*.log
/usr/bin/python3 - <<'PY'
import glob, sys
rows = [l.split()[1:] for f in sorted(glob.glob("cpu-*.log")) for l in open(f)
        if l.startswith("rank-cpu")]
assert len(rows) == 3, rows
worst = max((float(u) + float(s)) / float(e) for u, s, e in rows)
print(f"busiest rank: CPU {worst:.0%} of wall time")
# A rank spinning in MPI_Recv would use ~100 % of a core.
sys.exit(0 if worst < 0.5 else 1)
PY
echo "PASS"
