#!/usr/bin/env bash
# signals.sh BUILD_DIR SCRATCH
#
# Signals to a trainer (real es-train on zlib):
#   SIGTERM after the first step: the step in flight finishes, the run file
#     is complete, the scratch directory is empty, exit 143 with a message
#     saying how to resume; --resume then completes the run.
#   SIGINT twice: exits at once (130); what it left in the scratch directory
#     is removed by the next run.
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
common=(--corpus "$zlib" --modules-per-step 4 --directions 3 --hidden 8 --workers 2
  --scratch "$scratch/shm" --no-baseline-cache --no-replay --no-decision-cache)

# Waits until FILE has a line matching PATTERN (or the process is gone).
wait_for() {
  local file="$1" pattern="$2" pid="$3"
  for _ in $(seq 600); do
    grep -q "$pattern" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# es-train's progress lines start with "step N/M". Eight steps: enough for
# SIGTERM to land mid-run, few enough for --resume to finish them quickly.
"$bin/es-train" "${common[@]}" --steps 8 -o run.h5 >term.out 2>term.err &
pid=$!
wait_for term.err '^step 1/' "$pid" || fail "es-train printed no step: $(cat term.err)"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 143 ] || fail "exit $status after SIGTERM, want 143: $(tail -n 3 term.err)"
grep -q "stopped by signal 15; the run file run.h5 holds every finished step: continue with es-train --resume run.h5" term.err ||
  fail "no resume message: $(tail -n 3 term.err)"
[ -z "$(ls -A shm)" ] || fail "left in the scratch directory after SIGTERM: $(ls -A shm)"
steps="$(grep -o '^step [0-9]*' term.err | tail -n1)"
echo "SIGTERM: exit 143 after ${steps#step } steps, scratch directory empty"
"$bin/es-train" --resume run.h5 --workers 2 >resume.out 2>&1 &
pid=$!
wait_for resume.out '^step ' "$pid" || fail "the resumed run printed no step: $(cat resume.out)"
# The resumed run locks its own run file, not a nameless one…
[ -e run.h5.lock ] && [ ! -e .lock ] || fail "the resumed run did not lock run.h5 (lock files: $(ls -a | grep lock))"
wait "$pid" || fail "resume failed: $(tail -n 5 resume.out)"
[ -z "$(ls -A shm)" ] || fail "left in the scratch directory after the resumed run"
# …and removes the lock file when it ends.
[ ! -e run.h5.lock ] || fail "the lock file stayed after the run ended"
echo "resumed to the end"

# Two SIGINTs: at once, then the next run cleans up.
"$bin/es-train" "${common[@]}" --steps 50 -o run2.h5 >int.out 2>int.err &
pid=$!
wait_for int.err '^step 1/' "$pid" || fail "es-train printed no step: $(cat int.err)"
kill -INT "$pid"
sleep 0.2
kill -INT "$pid" 2>/dev/null || true
status=0
wait "$pid" || status=$?
[ "$status" -eq 130 ] || [ "$status" -eq 143 ] || fail "exit $status after two SIGINTs"
left="$(ls -A shm | wc -l)"
"$bin/mlgo-eval" run heuristic "$zlib" --scratch "$scratch/shm" --no-per-module >eval.out 2>&1 ||
  fail "mlgo-eval failed: $(tail -n 3 eval.out)"
[ -z "$(ls -A shm)" ] || fail "the next run did not remove what the killed one left: $(ls -A shm)"
echo "two SIGINTs: exit $status, $left scratch directories left, removed by the next run"
