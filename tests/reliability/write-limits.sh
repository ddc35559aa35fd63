#!/usr/bin/env bash
# write-limits.sh BUILD_DIR SCRATCH
#
# A trainer whose writes fail (issue 28): under a file-size limit (ulimit -f:
# SIGXFSZ, then EFBIG) and on a full filesystem (a 64 KiB tmpfs: ENOSPC),
# es-train exits 1 with one error naming the file, the errno's text and what
# the run file holds; it leaves no temporary, no lock file and nothing in its
# scratch directory, never crashes on the way out, and --resume continues
# the run once there is room. mlgo-eval's trace writer the same.
set -euo pipefail
build="$(realpath "$1")" scratch="$(realpath -m "$2")"
bin="$build/apps"
zlib="$build/corpora/zlib/corpus"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
rm -rf "$scratch"
mkdir -p "$scratch/shm"
cd "$scratch"
run_flags=(--corpus "$zlib" --modules-per-step 3 --directions 2 --hidden 8 --workers 2
  --scratch "$scratch/shm")
common=("${run_flags[@]}" --steps 8)

# expect_clean_failure NAME LOG RUN PATTERN: exit 1 (not a signal), the
# error matches PATTERN, nothing of the run's own is left.
expect_clean_failure() {
  local name="$1" status="$2" log="$3" run="$4" pattern="$5"
  [ "$status" -eq 1 ] || fail "$name: exit $status, want 1: $(tail -n 3 "$log")"
  grep -q "error: .*$pattern" "$log" || fail "$name: no error matching /$pattern/: $(tail -n 3 "$log")"
  [ ! -e "$run.tmp" ] || fail "$name: left $run.tmp"
  [ ! -e "$run.lock" ] || fail "$name: left $run.lock"
  [ -z "$(ls -A shm)" ] || fail "$name: left in the scratch directory: $(ls -A shm)"
  echo "ok   $name: $(grep -o 'error: .*' "$log" | head -c 300)"
}

# 1. A limit below the run file's start: nothing is written, nothing is left.
status=0
(ulimit -f 64 && "$bin/es-train" "${common[@]}" -o tiny.h5 >tiny.log 2>&1) || status=$?
expect_clean_failure "file-size limit before the first step" "$status" tiny.log tiny.h5 \
  "tiny.h5.tmp: .*File too large.*no run file was written"
[ ! -e tiny.h5 ] || fail "a run file was left after the failed start"

# 2. A limit reached after some steps: the run file keeps the steps before.
# The limit sits halfway between the run file's size after its first step
# and at its end, both measured on the same run without a limit (the file
# is rewritten every step and grows by its records and snapshots; a fixed
# limit breaks whenever the policy format or HDF5 changes its size).
"$bin/es-train" "${run_flags[@]}" --steps 1 -o size-1.h5 >size.log 2>&1 || fail "es-train: $(tail -n 3 size.log)"
"$bin/es-train" "${common[@]}" -o size-8.h5 >size.log 2>&1 || fail "es-train: $(tail -n 3 size.log)"
first=$(stat -c %s size-1.h5) last=$(stat -c %s size-8.h5)
[ $((last - first)) -ge 2048 ] || fail "the run file grows only $((last - first)) bytes in 7 steps"
limit=$(((first + last) / 2 / 1024)) # ulimit -f counts KiB
status=0
(ulimit -f "$limit" && "$bin/es-train" "${common[@]}" -o run.h5 >limit.log 2>&1) || status=$?
expect_clean_failure "file-size limit mid-run" "$status" limit.log run.h5 \
  "run.h5.tmp: .*File too large.*step [0-9]* is lost, .*run.h5 holds"
lost="$(grep -o 'step [0-9]* is lost' limit.log | grep -o '[0-9]*')"
held="$("$bin/mlgo-results" summary run.h5 | awk 'NR == 1 {for (i = 1; i <= NF; ++i) if ($i == "steps") c = i} NR == 2 {print $c}')"
held="${held%%/*}"
[ "$held" = "$((lost - 1))" ] || fail "the run file holds $held steps, want $((lost - 1)) (step $lost was lost)"
"$bin/es-train" --resume run.h5 --workers 2 --scratch "$scratch/shm" >resume.log 2>&1 ||
  fail "--resume after the limit failed: $(tail -n 3 resume.log)"
grep -q "^step 8/8" resume.log || fail "the resumed run did not reach step 8: $(tail -n 3 resume.log)"
[ "$(grep -c '^step ' resume.log)" -eq $((8 - lost + 1)) ] ||
  fail "the resumed run ran $(grep -c '^step ' resume.log) steps, want $((8 - lost + 1)) (step $lost was lost)"
echo "ok   the run file held $held steps; --resume ran steps $lost-8"

# 3. A full filesystem: a 64 KiB tmpfs (needs root; skipped where it cannot be mounted).
mkdir -p full
if mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
  trap 'umount "$scratch/full" 2>/dev/null || true' EXIT
  status=0
  "$bin/es-train" "${common[@]}" -o full/run.h5 >full.log 2>&1 || status=$?
  expect_clean_failure "full filesystem (es-train -o)" "$status" full.log full/run.h5 \
    "full/run.h5.tmp: .*No space left on device"
  status=0
  "$bin/mlgo-eval" run heuristic "$zlib" --trace full/trace.h5 --workers 2 \
    --scratch "$scratch/shm" >eval.log 2>&1 || status=$?
  expect_clean_failure "full filesystem (mlgo-eval --trace)" "$status" eval.log full/trace.h5 \
    "trace.h5.*No space left on device"
  [ -s eval.log ] && ! grep -q "Segmentation\|core dumped" eval.log || fail "mlgo-eval crashed: $(tail -n 3 eval.log)"
else
  echo "skipped: cannot mount a tmpfs here (not root?): the full-filesystem cases did not run"
fi
