#!/usr/bin/env bash
# cli.sh BUILD_DIR SCRATCH
#
# Bad input to the trainers' command lines and configs ends in one clear
# error naming the file, key or flag, and nothing is replaced or lost.
set -euo pipefail
build="$(realpath "$1")" scratch="$(realpath -m "$2")"
bin="$build/apps"
zlib="$build/corpora/zlib/corpus"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
failures=0
quick=(--corpus "$zlib" --steps 1 --modules-per-step 2 --directions 2 --hidden 4 --workers 2)

# expect NAME STATUS-PATTERN MESSAGE-PATTERN COMMAND…
expect() {
  local name="$1" want="$2" pattern="$3"
  shift 3
  local status=0
  "$@" >out.log 2>&1 || status=$?
  if [[ ! "$status" =~ ^($want)$ ]] || ! grep -q -- "$pattern" out.log; then
    echo "FAIL $name: exit $status (want $want), want /$pattern/:"
    tail -n 5 out.log | sed 's/^/  | /'
    failures=$((failures + 1))
  else
    echo "ok   $name: $(grep -m1 -- "$pattern" out.log)"
  fi
}

printf 'steps = 1\nsigma = [1,2\n' >unclosed.toml
expect "TOML syntax error" "[1-9][0-9]*" "unclosed.toml:2:" \
  "$bin/es-train" --config unclosed.toml --corpus "$zlib" -o a.h5
printf 'sigam = 0.5\n' >typo.toml
expect "unknown TOML key" "[1-9][0-9]*" "typo.toml: unknown key 'sigam'" \
  "$bin/es-train" --config typo.toml --corpus "$zlib" -o a.h5
printf '[run]\npolicyy = "x"\n' >section.toml
expect "unknown key in a subcommand's section" "[1-9][0-9]*" "section.toml: unknown key \[run\] 'policyy'" \
  "$bin/mlgo-eval" --config section.toml run heuristic "$zlib"
[ ! -e a.h5 ] || {
  echo "FAIL a rejected config still wrote a.h5"
  failures=$((failures + 1))
}

"$bin/es-train" "${quick[@]}" -o run.h5 >/dev/null 2>&1
before="$(sha256sum run.h5)"
expect "-o onto an existing run" 1 "run.h5 already holds a run .*--resume run.h5, or give --overwrite" \
  "$bin/es-train" "${quick[@]}" -o run.h5
[ "$(sha256sum run.h5)" = "$before" ] || {
  echo "FAIL the refused run changed run.h5"
  failures=$((failures + 1))
}
expect "--overwrite replaces it" 0 "done: 1 steps" "$bin/es-train" "${quick[@]}" -o run.h5 --overwrite

# Two trainers on one run file: the second is refused while the first runs.
"$bin/es-train" --corpus "$zlib" --steps 30 --modules-per-step 2 --directions 2 --hidden 4 \
  --workers 2 -o busy.h5 >busy.log 2>&1 &
first=$!
for _ in $(seq 100); do
  [ -s busy.h5.lock ] && break
  sleep 0.1
done
expect "a second writer" 1 "busy.h5 is being written by another process (pid $first" \
  "$bin/es-train" "${quick[@]}" -o busy.h5 --overwrite
kill -INT "$first" 2>/dev/null || true
wait "$first" || true

for device in /dev/full /dev/null; do
  expect "es-train -o $device" 1 "$device is a character device" "$bin/es-train" "${quick[@]}" -o "$device"
  expect "bc-train --policy-output $device" 1 "$device is a character device" \
    "$bin/bc-train" --corpus "$zlib" --epochs 1 --hidden 4 -o bc.h5 --overwrite --policy-output "$device"
  [ -c "$device" ] || {
    echo "FAIL $device is no longer a device"
    failures=$((failures + 1))
  }
done
mkdir -p adir
expect "-o onto a directory" 1 "adir is a directory" "$bin/es-train" "${quick[@]}" -o adir

expect "--workers -2" "[1-9][0-9]*" "--workers: must be a whole number of at least 0 (got -2)" \
  "$bin/es-train" "${quick[@]}" --workers -2 -o w.h5
expect "--modules-per-step -1" "[1-9][0-9]*" "--modules-per-step: must be a whole number of at least 1 (got -1)" \
  "$bin/es-train" "${quick[@]}" --modules-per-step -1 -o w.h5
expect "--resume with --steps" 1 "--steps cannot be given with --resume" \
  "$bin/es-train" --resume run.h5 --steps 10
"$bin/bc-train" --corpus "$zlib" --epochs 1 --hidden 4 -o bc.h5 >/dev/null 2>&1
expect "es-train --resume on a bc-train run" 1 "bc.h5 is a run of bc-train, not of es-train: resume it with bc-train --resume bc.h5" \
  "$bin/es-train" --resume bc.h5

# A starting policy for other features: the run stops and says why.
# (A real MLP over zlib's features, one of them renamed.)
"$bin/mlgo-eval" run heuristic "$zlib" --trace trace.h5 --no-per-module >/dev/null 2>&1
"$bin/mlgo-eval" vocab trace.h5 -o vocab --quantiles 20 >/dev/null
"$bin/mlgo-eval" init-mlp --trace trace.h5 --vocab vocab -o mlp.json --hidden 4 >/dev/null
sed 's/"callee_basic_block_count"/"no_such_feature"/g' mlp.json >other.json
expect "--initial-policy for other features" 1 "does not fit the compiler's inliner features: .*no_such_feature" \
  "$bin/es-train" "${quick[@]}" -o other.h5 --initial-policy other.json
# A module that does not compile (truncated bitcode): clang's own error is in
# the message, on both backends.
cp -r "$zlib" broken-corpus
head -c 200 "$zlib/compress.o.bc" >broken-corpus/adler32.o.bc
for backend in inprocess clang; do
  expect "clang's error text ($backend)" "[0-9]+" "adler32.o.*failed.*error: " \
    "$bin/mlgo-eval" run heuristic broken-corpus --no-baseline-cache --backend "$backend"
done
# An LLVM option clang does not know: its own words, though they say no "error".
cp -r "$zlib" option-corpus
printf '\0-mllvm\0-no-such-llvm-option' >>option-corpus/adler32.o.cmd
expect "an unknown -mllvm option in a .cmd" "[0-9]+" \
  "adler32.o.*failed.*Unknown command line argument '-no-such-llvm-option'" \
  "$bin/mlgo-eval" run heuristic option-corpus --no-baseline-cache
# Modules every tool refuses when the corpus is loaded, naming the module.
cp -r "$zlib" bad-modules
: >bad-modules/adler32.o.bc
expect "an empty .bc" 1 'adler32.o.bc: bitcode of module "adler32.o" is empty (0 bytes)' \
  "$bin/es-train" --corpus bad-modules --steps 1 --workers 2 -o bad.h5
echo garbage >bad-modules/adler32.o.bc
expect "a .bc that is not bitcode" 1 'bitcode of module "adler32.o" is not LLVM bitcode' \
  "$bin/mlgo-eval" run heuristic bad-modules
cp "$zlib/adler32.o.bc" bad-modules/adler32.o.bc
printf '\0-o\0elsewhere.o' >>bad-modules/crc32.o.cmd
expect "a .cmd with its own -o" 1 'command line of module "crc32.o" has its own -o elsewhere.o' \
  "$bin/mlgo-eval" run heuristic bad-modules
# A corpus of the other -O level than the task's: a warning naming --task.
expect "an -Oz corpus for the eviction task" "[0-9]+" "warning: corpus .* was built with -Oz (15 of 15 modules), but the task regalloc-eviction (--task) compares against -O2" \
  "$bin/mlgo-eval" run neutral "$zlib" --task regalloc-eviction --workers 2
# Options that cannot apply or cannot be met.
expect "sep-CMA-ES given gradient flags" 0 "warning: --optimizer sep-cma-es does not use --directions, --learning-rate" \
  "$bin/es-train" --corpus "$zlib" --steps 1 --modules-per-step 2 --hidden 4 --workers 2 \
  --optimizer sep-cma-es --directions 3 --learning-rate 0.5 -o cma.h5
expect "--top-directions above --directions" 1 "--top-directions 5 keeps more directions than a step has (--directions 2)" \
  "$bin/es-train" "${quick[@]}" --top-directions 5 -o top.h5
expect "more modules per step than the corpus has" 0 "warning: modules per step (40) is more than the 15 modules" \
  "$bin/es-train" --corpus "$zlib" --steps 1 --modules-per-step 40 --directions 2 --hidden 4 \
  --workers 2 -o many.h5

expect "a training module left out is said" 0 "warning: 1 training module left out, the -Oz baseline failed" \
  "$bin/es-train" --corpus broken-corpus --steps 1 --modules-per-step 2 --directions 2 --hidden 4 \
  --workers 2 -o broken.h5

# Resuming after a module's bitcode changed: refused, naming the module.
cp -r "$zlib" changing
"$bin/es-train" --corpus changing --steps 1 --modules-per-step 2 --directions 2 --hidden 4 \
  --workers 2 -o changing.h5 >/dev/null 2>&1
cp changing/compress.o.bc changing/adler32.o.bc
expect "resume after a module's bitcode changed" 1 'the bitcode of module "adler32.o" changed since the run started' \
  "$bin/es-train" --resume changing.h5

# Tables that cannot be written are an error, not exit 0.
expect "export onto a full disk" 1 "writing standard output failed" \
  sh -c "'$bin/mlgo-results' export run.h5 --table steps >/dev/full"

# ppo-train's final policy goes beside its run file, not into the working directory.
mkdir -p elsewhere
"$bin/ppo-train" --corpus "$zlib" --iterations 1 --modules-per-iteration 2 --hidden 4 \
  --workers 2 -o elsewhere/ppo.h5 >ppo.log 2>&1 || true
if [ -f elsewhere/ppo.json ] && [ ! -e results ]; then
  echo "ok   ppo-train's policy beside its run file: elsewhere/ppo.json"
else
  echo "FAIL ppo-train's policy is not at elsewhere/ppo.json: $(tail -n 3 ppo.log)"
  failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
