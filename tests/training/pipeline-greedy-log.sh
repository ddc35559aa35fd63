#!/usr/bin/env bash
# The greedy program search's measure log (--checkpoint) on real code: a
# search on two zlib modules is killed (SIGKILL) once its log holds a few
# pipelines, run again (it starts from the log), cut after its first round,
# then continued to three rounds. Every pipeline the log answers is then
# compiled again (--verify-cache) by a search that must agree with the
# compiler on each measure and write the same policy byte for byte.
# Usage: pipeline-greedy-log.sh MLGO-EVAL ZLIB-CORPUS OUT
set -euo pipefail
eval=$1 corpus=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
fail() { echo "pipeline-greedy-log: $*" >&2; exit 1; }
log="$out/measures.tsv"
search() { # NAME ROUNDS FLAG...
  local name=$1 rounds=$2
  shift 2
  "$eval" pipeline-search --program "$corpus" --sample 2 --program-rounds "$rounds" \
    --checkpoint "$log" -o "$out/$name.json" --markdown "$out/$name.md" "$@" >"$out/$name.log" 2>&1 ||
    { cat "$out/$name.log"; fail "search $name failed"; }
}
rows() { [ -f "$log" ] && echo $(($(wc -l <"$log") - 3)) || echo 0; }

# Killed mid-round: the log keeps the chunks compiled so far.
setsid "$eval" pipeline-search --program "$corpus" --sample 2 --program-rounds 0 \
  --checkpoint "$log" -o "$out/killed.json" >"$out/killed.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  [ "$(rows)" -ge 8 ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -KILL -- "-$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
killed=$(rows)
[ "$killed" -ge 8 ] || fail "the log held $killed pipelines when the search was killed"
grep -q "^mlgo-program-measures 1$" "$log" || fail "no log header"

search first 0
grep -q "measure log $log: $killed pipelines already measured" "$out/first.log" ||
  fail "the run again did not start from the $killed logged pipelines"
search resumed 3
grep -Eq '^[0-9]+ pipelines \(([1-9][0-9]*) from the measure log\)' "$out/resumed.md" ||
  fail "the continued search took nothing from the log"
search verified 3 --verify-cache
cmp -s "$out/resumed.json" "$out/verified.json" ||
  fail "the search verified against the compiler wrote another policy"

# A log of another search (other modules) is refused, naming the file.
if "$eval" pipeline-search --program "$corpus" --sample 3 --program-rounds 0 --checkpoint "$log" \
  -o "$out/other.json" >"$out/other.log" 2>&1; then
  fail "a log of other modules was used"
fi
grep -q "the log of another search" "$out/other.log" || fail "no reason for refusing the log"
echo "pipeline-greedy-log: ok (killed at $killed pipelines; $(sed -n 's/^\([0-9]* pipelines.*\)$/\1/p' "$out/resumed.md"))"
