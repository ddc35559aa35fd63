#!/usr/bin/env bash
# search-checkpoint.sh MLGO_EVAL CORPUS OUT
#
# A decision search killed (SIGKILL) in the middle of a round and run again
# with the same command continues from its checkpoint: the policy it writes
# is the uninterrupted search's byte for byte, and its --tried trace holds
# the same rows (every column but the compile times). A finished search
# leaves no checkpoint; a damaged one is refused with its name.
set -euo pipefail
eval_bin="$1" corpus="$2" out="$3"
rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
search() { # NAME: the search, its checkpoint and tried trace named after it
  exec "$eval_bin" search "$corpus" -o "$out/$1.json" --max-decisions 12 --order random \
    --seed 3 --trials-per-round 3 --tried "$out/$1.h5" --checkpoint "$out/$1.ckpt" \
    --checkpoint-modules 8
}

(search full) >"$out/full.log" 2>&1 || { tail -20 "$out/full.log"; fail "the search failed"; }
[ ! -e "$out/full.ckpt" ] && [ ! -e "$out/full.ckpt.tried.h5" ] ||
  fail "a finished search left its checkpoint"
grep -q "^round 3/" "$out/full.log" || fail "too few rounds to stop in one ($out/full.log)"

# Killed once a checkpoint is in round 2 with some modules done (mid-round).
# exec: the background job is mlgo-eval itself, which the kill must reach.
(search part) >"$out/part-1.log" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
  if [ -f "$out/part.ckpt" ] && grep -q '^rounds 1$' "$out/part.ckpt" &&
    grep -q '^module 2 ' "$out/part.ckpt"; then
    kill -KILL "$pid"
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
wait "$pid" 2>/dev/null && fail "the search ended before it was killed mid-round"
[ -f "$out/part.ckpt" ] || fail "no checkpoint after the kill"
grep -q '^rounds 1$' "$out/part.ckpt" || fail "the checkpoint is not in round 2"
[ ! -e "$out/part.json" ] || grep -q . "$out/part.json" || fail "an empty policy file"

(search part) >"$out/part-2.log" 2>&1 || { tail -20 "$out/part-2.log"; fail "the resumed search failed"; }
grep -q "^resuming from $out/part.ckpt: 1 rounds done, [1-9][0-9]* modules into the next" \
  "$out/part-2.log" || fail "the search did not resume mid-round ($out/part-2.log)"
[ ! -e "$out/part.ckpt" ] || fail "the resumed search left its checkpoint"
cmp "$out/full.json" "$out/part.json" || fail "the resumed search wrote another policy"

/usr/bin/python3 - "$out/full.h5" "$out/part.h5" <<'EOF' || fail "the tried traces differ"
import sys
import h5py
import numpy as np

def datasets(path):
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, item: found.__setitem__(name, item[()])
                     if isinstance(item, h5py.Dataset) else None)
    return found

a, b = datasets(sys.argv[1]), datasets(sys.argv[2])
assert a.keys() == b.keys(), (sorted(a), sorted(b))
for name in sorted(a):
    if name == "modules/seconds":  # compile times
        continue
    same = a[name].shape == b[name].shape and (
        np.array_equal(a[name], b[name], equal_nan=True) if a[name].dtype.kind == "f"
        else np.array_equal(a[name], b[name]))
    assert same, name
print("tried decisions:", len(a["modules/name"]), "rows, the same after the resume")
EOF

# A time budget stops the search within a round, at a chunk's end: the
# budget of 1 s is spent by the start and the first chunk, so the search
# ends 8 modules into round 1 and writes those modules' flips.
"$eval_bin" search "$corpus" -o "$out/budget.json" --max-decisions 12 --order random --seed 3 \
  --trials-per-round 3 --checkpoint-modules 8 --max-seconds 1 >"$out/budget.log" 2>&1 ||
  { tail -20 "$out/budget.log"; fail "the search with a budget failed"; }
grep -q "^time budget of 1 s reached within round 1 (8 of [0-9]* modules)" "$out/budget.log" ||
  fail "the budget did not stop the search within its first round ($out/budget.log)"
grep -q "^round 1/" "$out/budget.log" && fail "the search with a budget finished a round"
grep -q "^search: 0 rounds, " "$out/budget.log" || fail "no summary of the stopped search"
[ -s "$out/budget.json" ] || fail "the stopped search wrote no policy"

echo "not a checkpoint" >"$out/bad.ckpt"
if "$eval_bin" search "$corpus" -o "$out/bad.json" --max-decisions 12 --order random --seed 3 \
  --checkpoint "$out/bad.ckpt" >"$out/bad.log" 2>&1; then
  fail "a damaged checkpoint was accepted"
fi
grep -q -- "--checkpoint $out/bad.ckpt: not a decision search checkpoint" "$out/bad.log" ||
  fail "the damaged checkpoint is not named ($(cat "$out/bad.log"))"
echo "a search killed mid-round and resumed: the same policy and the same tried decisions"
