#!/usr/bin/env bash
# soak.sh BUILD_DIR CORPUS SCRATCH [SEED]
#
# The soak of docs/RELIABILITY.md (issue 28), not part of CI (~5 minutes on
# 2 cores): es-train makes 10,000 compilations (50 steps x 20 candidates x
# 10 modules, no replay or caches) while 1 % of the in-process workers are
# killed with SIGKILL at random, writing its run file to a small tmpfs that
# a filler leaves with only 64 KiB free at a random step (from SEED). Checks:
# the trainer ends with one error naming the file, ENOSPC and the steps the
# run file holds; it holds exactly the steps before the lost one; no
# temporary, lock, scratch entry or worker process is left; after the
# filler is removed --resume completes all 50 steps. Prints what happened.
set -euo pipefail
build="$(realpath "$1")" corpus="$(realpath "$2")" scratch="$(realpath -m "$3")" seed="${4:-1}"
bin="$build/apps"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "needs root to mount a tmpfs"
rm -rf "$scratch"
mkdir -p "$scratch/out" "$scratch/shm"
cd "$scratch"
mount -t tmpfs -o size=32m tmpfs out
trap 'umount "$scratch/out" 2>/dev/null || true' EXIT
RANDOM=$seed
fill_at=$((5 + RANDOM % 40))
args=(--corpus "$corpus" --steps 50 --directions 10 --modules-per-step 10 --hidden 8
  --no-replay --no-decision-cache --no-baseline-cache --workers 2 --scratch "$scratch/shm"
  --seed "$seed")
start=$(date +%s)
MLGO_WORKER_FAULT=random-kill:0.01 "$bin/es-train" "${args[@]}" -o out/run.h5 >train.out 2>train.err &
pid=$!
# At step fill_at, fill the output filesystem to 64 KiB free.
while kill -0 "$pid" 2>/dev/null && ! grep -q "^step $fill_at/" train.err; do sleep 0.2; done
free_kib=$(df -k --output=avail out | tail -n1)
dd if=/dev/zero of=out/filler bs=1K count=$((free_kib - 64)) status=none 2>/dev/null || true
echo "step $fill_at: filled out/ to $(df -k --output=avail out | tail -n1) KiB free"
status=0
wait "$pid" || status=$?
seconds=$(($(date +%s) - start))
[ "$status" -eq 1 ] || fail "es-train exited $status, want 1: $(tail -n 3 train.err)"
error="$(grep 'error:' train.err)"
echo "es-train after ${seconds}s: $error"
echo "$error" | grep -q "out/run.h5.tmp: .*No space left on device.*; step [0-9]* is lost, .*out/run.h5 holds steps 1-[0-9]*" ||
  fail "the error does not say what was lost and kept: $error"
lost=$(echo "$error" | grep -o 'step [0-9]* is lost' | grep -o '[0-9]*')
held=$("$bin/mlgo-results" summary out/run.h5 | awk 'NR == 1 {for (i = 1; i <= NF; ++i) if ($i == "steps") c = i} NR == 2 {print $c}')
held=${held%%/*}
[ "$held" -eq $((lost - 1)) ] || fail "the run file holds $held steps, want $((lost - 1))"
[ ! -e out/run.h5.tmp ] && [ ! -e out/run.h5.lock ] || fail "left: $(ls -A out)"
[ -z "$(ls -A shm)" ] || fail "left in the scratch directory: $(ls -A shm)"
! pgrep -f mlgo-inprocess-worker >/dev/null || fail "worker processes are left"
rm out/filler
MLGO_WORKER_FAULT=random-kill:0.01 "$bin/es-train" --resume out/run.h5 --workers 2 \
  --scratch "$scratch/shm" >resume.out 2>resume.err || fail "--resume failed: $(tail -n 3 resume.err)"
grep -q "^step 50/50" resume.err || fail "the resumed run did not reach step 50"
[ -z "$(ls -A shm)" ] || fail "left in the scratch directory after the resumed run: $(ls -A shm)"
"$bin/mlgo-results" summary out/run.h5 | awk 'NR <= 2'
echo "PASS: filled at step $fill_at, step $lost lost, $held steps kept, --resume reached 50/50; no temporary, lock, scratch or worker left"
