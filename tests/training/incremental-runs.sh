#!/usr/bin/env bash
# incremental-runs.sh ES_TRAIN PPO_TRAIN MLGO_RESULTS CORPUS OUT
#
# Incremental evaluation changes no result: an es-train and a ppo-train run
# with --incremental --verify-incremental (every job compiled in full as
# well, the run stopped at the first difference) hold exactly the numbers
# of the same runs without it (mlgo-results diff; left out: the flags
# themselves and the counts of how jobs were answered).
set -euo pipefail
es="$1" ppo="$2" results="$3" corpus="$4" out="$5"
rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
compare() {
  "$results" diff "$1" "$2" --ignore incremental verify-incremental output policy-output \
    cache_hits cache_lookups replays replays_verified full_compiles ||
    fail "$1 and $2 differ"
}
# Replay and the decision cache off: every job compiles to the end, so every
# job is verified.
common=(--corpus "$corpus" --seed 5 --no-replay --no-decision-cache)
for mode in full incremental; do
  flags=(--no-incremental)
  [ "$mode" = incremental ] && flags=(--incremental --verify-incremental)
  "$es" "${common[@]}" --steps 2 --directions 2 --modules-per-step 2 "${flags[@]}" \
    -o "$out/es-$mode.h5" >"$out/es-$mode.log" 2>&1 ||
    { tail -20 "$out/es-$mode.log"; fail "es-train ($mode) failed"; }
  "$ppo" "${common[@]}" --iterations 1 --modules-per-iteration 3 "${flags[@]}" \
    -o "$out/ppo-$mode.h5" >"$out/ppo-$mode.log" 2>&1 ||
    { tail -20 "$out/ppo-$mode.log"; fail "ppo-train ($mode) failed"; }
done
for run in es ppo; do
  grep -q "^incremental: .* compiles verified identical in full" "$out/$run-incremental.log" ||
    fail "$run: no job was verified ($out/$run-incremental.log)"
  grep "^incremental:" "$out/$run-incremental.log"
done
compare "$out/es-full.h5" "$out/es-incremental.h5"
compare "$out/ppo-full.h5" "$out/ppo-incremental.h5"
echo "es-train and ppo-train: the same runs with incremental evaluation, verified"
