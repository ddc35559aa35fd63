# Shared by bench/pipeline-*.sh: search NAME ARGS… runs a program search on
# the training code bases ($train), writing $out/NAME.json and NAME.md;
# judge NAME SET writes $out/NAME.SET.md and
# .values, the report of $out/NAME.json on a set of configs/inlining-split.toml
# (skipped when its .md exists, so a script resumes where it stopped).
# step_files PREFIX STEP… writes $out/PREFIX1.json, … : a pipeline policy
# per step of a greedy path, each with its step's change and every earlier
# one (a step: "-PassClass" skips, "+point=passes" adds).
# report_on NAME POLICY LABEL CODEBASE… writes $out/NAME.LABEL.md and
# .values, the report of POLICY on the named code bases (skipped when done).
# against_shipped NAME… (rounds 10 and 11's rule) judges each policy on
# validation and, among those with no validation code base above -Oz,
# takes the fewest modules larger (ties: the smaller total); it replaces
# the shipped pipeline-inlining-oz ($out/shipped.json, $shipped_policy) only with fewer
# modules larger. Lines in $out/validation.txt; the decision in $chosen.
# round10_pool PARAMS_DIR sets pool (--pool FILE …): round 8's pool (round
# 6's seven and round 7's six steps, from $v3 and $v8) plus the parameter
# search's steps 2-4 in PARAMS_DIR; a missing file stops the script.
# decide_unseen LABEL CANDIDATE (rounds 9 and 12's rule): CANDIDATE replaces
# the shipped policy ($out/shipped.LABEL.md against $out/CANDIDATE.LABEL.md)
# if no code base is above -Oz under it and its total is smaller; the lines
# and the decision in $out/LABEL.txt.
# for_the_record NAME… writes each one's report on round 9's six code
# bases and on test, a line each in $out/record.txt.
# total/larger/above FILE.md read a report's total change (%), its modules
# larger than -Oz and how many code bases are above -Oz.
judge() {
  local name=$1 set=$2
  [ -s "$out/$name.$set.md" ] && return 0
  "$eval" report "$out/$name.json" --task pass-pipeline --split configs/inlining-split.toml \
    --set "$set" --markdown "$out/$name.$set.md.part" --values "$out/$name.$set.values" \
    >"$out/$name.$set.log" 2>&1 || true
  mv "$out/$name.$set.md.part" "$out/$name.$set.md"
}

report_on() {
  local name=$1 policy=$2 label=$3
  shift 3
  [ -s "$out/$name.$label.md" ] && return 0
  "$eval" report "$policy" --task pass-pipeline "$@" --markdown "$out/$name.$label.md.part" \
    --values "$out/$name.$label.values" >"$out/$name.$label.log" 2>&1
  mv "$out/$name.$label.md.part" "$out/$name.$label.md"
}

# inlining_report NAME LABEL CODEBASE… writes $out/NAME.LABEL.md and
# .values, the report of the inliner policy $out/NAME.json on the code
# bases (skipped when done); inlining_report_of NAME POLICY LABEL CODEBASE…
# the same for a policy file or name kept elsewhere.
inlining_report() {
  local name=$1 label=$2
  shift 2
  inlining_report_of "$name" "$out/$name.json" "$label" "$@"
}
inlining_report_of() {
  local name=$1 policy=$2 label=$3
  shift 3
  [ -s "$out/$name.$label.md" ] && return 0
  "$eval" report "$policy" "$@" --markdown "$out/$name.$label.md.part" \
    --values "$out/$name.$label.values" >"$out/$name.$label.log" 2>&1
  mv "$out/$name.$label.md.part" "$out/$name.$label.md"
}

# inliner_sets sets the inliner rounds' code bases: validation, the sixteen
# code bases outside training and test that pipeline round 13 validates
# on; test, the split's six; fresh, the ten added on 2026-12-07 (round 15).
inliner_sets() {
  validation=(lua xz box2d ninja libyaml lzo2 libjpeg-turbo hunspell snappy double-conversion
    jq libsodium speex jsoncpp fmtlib tinyxml2)
  test=(pcre2 libwebp flac json-c leveldb zeromq)
  fresh=(mbedtls libuv1 brotli jansson giflib libogg re2 muparser gflags pugixml)
}

# rank_inliners NAME… (the inliner rounds' rule): reports each inliner
# policy $out/NAME.json on $validation, writes "above total name" lines in
# $out/validation.txt and sets wabove, wtotal and winner to the one with
# the fewest code bases above the baseline, then the smallest total.
rank_inliners() {
  local name
  : >"$out/validation.txt"
  for name in "$@"; do
    inlining_report "$name" validation "${validation[@]}"
    echo "$(above "$out/$name.validation.md") $(total "$out/$name.validation.md") $name" >>"$out/validation.txt"
  done
  read -r wabove wtotal winner < <(sort -k1,1n -k2,2g "$out/validation.txt" | head -n 1)
}

# decide_inliner (after rank_inliners; the later inliner rounds' rule): the
# winner ships only with no validation code base above -Oz and a total
# below it; then its reports on $test and $fresh, for information. Lines in
# $out/decision.txt.
decide_inliner() {
  {
    echo "winner: $winner: validation $wtotal %, $wabove code bases above -Oz"
    if [ "$wabove" = 0 ] && awk -v t="$wtotal" 'BEGIN {exit !(t < 0)}'; then
      echo "decision: $winner ships as inlining-oz"
    else
      echo "decision: nothing ships"
    fi
  } | tee "$out/decision.txt"
  inlining_report "$winner" test "${test[@]}"
  inlining_report "$winner" fresh "${fresh[@]}"
  echo "$winner: test $(total "$out/$winner.test.md") % ($(above "$out/$winner.test.md") above); fresh $(total "$out/$winner.fresh.md") % ($(above "$out/$winner.fresh.md") above)" |
    tee -a "$out/decision.txt"
}

# best_policy RUN.h5 POLICY.json: the policy of a bc-train run at the epoch
# with the best held-out agreement (BC's loss spikes now and then on these
# labels), else its last, as scripts/train-inlining takes it.
best_policy() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    best = f["policies/best/json"]
    text = best.asstr()[0] if best.shape[0] else f["policies/final/json"].asstr()[0]
open(sys.argv[2], "w").write(text)
PY
}

# one_way_trained FROM KEEP PREFIX MARGIN… (the one-way trained rounds):
# merges the training code bases ($train) into $out/train, runs the greedy
# search from -Oz trying only calls whose -Oz action is FROM (random order,
# $seconds of budget; resumable from its checkpoint), BC of its tried
# decisions weighted by bytes (configs/inlining-bc.toml, 30 epochs, seed 1,
# the epoch with the best held-out agreement) at each residual MARGIN, each
# deployed with --keep KEEP; sets candidates to PREFIX-MARGIN-keepKEEP.
# DAgger: with one_way_start=POLICY the search starts from that policy's
# decisions, and BC also learns from the traces in one_way_traces.
one_way_trained() {
  local from=$1 keep=$2 prefix=$3 margin name
  shift 3
  if [ ! -f "$out/train/corpus_description.json" ]; then
    rm -rf "$out/train"
    local args=()
    for name in "${train[@]}"; do args+=("$build/corpora/$name/corpus=$name"); done
    "$build/apps/mlgo-corpus" merge "${args[@]}" -o "$out/train" | tail -n 1
  fi
  if [ ! -s "$out/$prefix-flips.json" ]; then
    "$eval" search "$out/train" -o "$out/$prefix-flips.json.part" --flips-from "$from" --order random \
      --seed 1 --max-decisions 1000 --max-seconds "$seconds" --tried "$out/$prefix.tried.h5" \
      ${one_way_start:+--start-policy "$one_way_start"} \
      --checkpoint "$out/$prefix.checkpoint" >"$out/search.log" 2>&1
    mv "$out/$prefix-flips.json.part" "$out/$prefix-flips.json"
  fi
  grep -A1 '^search:' "$out/search.log"
  candidates=()
  for margin in "$@"; do
    name="$prefix-$margin"
    if [ ! -s "$out/$name.json" ]; then
      "$build/apps/bc-train" --config configs/inlining-bc.toml --seed 1 --residual-margin "$margin" \
        --epochs 30 --imitate-actions --outcome-weights --trace "$out/$prefix.tried.h5" \
        "${one_way_traces[@]/#/--trace=}" \
        -o "$out/$name.h5" --overwrite --policy-output "$out/$name.final.json" >"$out/$name.bc.log" 2>&1
      best_policy "$out/$name.h5" "$out/$name.json"
    fi
    [ -s "$out/$name-keep$keep.json" ] ||
      "$eval" margin "$out/$name.json" --keep "$keep" -o "$out/$name-keep$keep.json" >/dev/null
    candidates+=("$name-keep$keep")
  done
}

# one_way_round FROM KEEP PREFIX (the one-way trained rounds, after their
# rule): the training code bases of configs/inlining-split.toml, the
# inliner sets, one_way_trained at residual margins 0.1, 0.3 and 1, then
# the rounds' choice (rank_inliners, decide_inliner).
one_way_round() {
  read -r -a train < <(/usr/bin/python3 -c '
import tomllib
print(" ".join(tomllib.load(open("configs/inlining-split.toml", "rb"))["train"]))')
  inliner_sets
  ensure_corpora "${train[@]}" "${validation[@]}" "${test[@]}" "${fresh[@]}"
  one_way_trained "$1" "$2" "$3" 0.1 0.3 1
  rank_inliners "${candidates[@]}"
  decide_inliner
  cat "$out/validation.txt"
}

search() {
  local name=$1
  shift
  [ -s "$out/$name.md" ] && { echo "$name: done before"; return 0; }
  echo "$name: mlgo-eval pipeline-search ${train[*]} --program $*"
  "$eval" pipeline-search "${train[@]}" --program -o "$out/$name.json" \
    --markdown "$out/$name.md.part" "$@" >>"$out/$name.log" 2>&1
  mv "$out/$name.md.part" "$out/$name.md"
}

total() { sed -n 's/^| \*\*total\*\* |.*| \*\*\([-+0-9.]*\) %\*\* |.*/\1/p' "$1"; }
larger() { grep '^| \*\*total' "$1" | awk -F'|' '{gsub(/ /, "", $9); print $9}'; }
above() { grep -E '^\| [a-z0-9-]+ \|' "$1" | awk -F'|' '{gsub(/[ %]/, "", $7); if ($7 + 0 > 0) n++} END {print n + 0}'; }

step_files() {
  local prefix=$1
  shift
  /usr/bin/python3 - "$out" "$prefix" "$@" <<'PY'
import json, sys
out, prefix, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
skip, add = [], []
for n, step in enumerate(steps, 1):
    if step.startswith("-"):
        skip.append(step[1:])
    else:
        at, passes = step[1:].split("=", 1)
        add.append({"at": at, "passes": passes})
    policy = {"format": "mlgo-es-policy", "version": 2, "kind": "pipeline",
              "pipeline": {"skip": list(skip), "add": list(add)}}
    json.dump(policy, open(f"{out}/{prefix}{n}.json", "w"), indent=1)
PY
}

# ensure_corpora NAME… builds each recipe's corpus that is not built yet
# (its log in $out/NAME.recipe.log), and stops the script if one fails.
ensure_corpora() {
  local name
  for name in "$@"; do
    [ -f "$build/corpora/$name/corpus.stamp" ] || "corpus/recipes/$name.sh" >"$out/$name.recipe.log" 2>&1 ||
      { echo "$(basename "$0"): corpus/recipes/$name.sh failed: $out/$name.recipe.log" >&2; exit 1; }
  done
}

# set_pool_data LABEL POOL_DIR CODEBASE… (rounds 13 and 14) writes
# $out/LABEL.data.tsv, the learning data of the code bases: each module's
# features and its measure under -Oz and POOL_DIR's wide-greedy.json and
# step6.json, each with LLVM's inliner and with inlining-oz.
set_pool_data() {
  local label=$1 pool=$2
  shift 2
  [ -s "$out/$label.data.tsv" ] && return 0
  "$eval" pipeline-search "$@" --program --program-search choice \
    --inliner inlining-oz --pool "$pool/wide-greedy.json" --pool "$pool/step6.json" \
    --pool-measures "$out/$label.pool.tsv" --choice-data "$out/$label.data.tsv.part" \
    -o "$out/$label-choice.json" >"$out/$label-data.log" 2>&1
  mv "$out/$label.data.tsv.part" "$out/$label.data.tsv"
}

# The pipeline policy rounds 3-12 compared against: shipped as
# pipeline-inlining-oz until round 12 replaced it, since then -v1.
shipped_policy=configs/policies/pipeline-inlining-oz-v1.json

round10_pool() {
  local n f
  pool=()
  for n in 1 2 3 4 5 6; do pool+=(--pool "$v3/program-step$n.json"); done
  pool+=(--pool "$v3/combined-pipeline.json")
  for n in 1 2 3 4 5 6; do pool+=(--pool "$v8/wide-step$n.json"); done
  for n in 2 3 4; do pool+=(--pool "$1/params-step$n.json"); done
  for f in "${pool[@]}"; do
    [ "$f" = --pool ] || [ -s "$f" ] || { echo "missing $f: run the earlier rounds (bench/pipeline-v*.sh) first" >&2; exit 1; }
  done
}

decide_unseen() {
  local label=$1 candidate=$2 name f
  {
    for name in shipped "$candidate"; do
      f="$out/$name.$label.md"
      echo "$name: $label $(total "$f") %, $(larger "$f") modules larger, $(above "$f") code bases above -Oz"
    done
    local s="$out/shipped.$label.md" c="$out/$candidate.$label.md"
    if [ "$(above "$c")" = 0 ] && awk -v a="$(total "$c")" -v b="$(total "$s")" 'BEGIN {exit !(a < b)}'; then
      echo "decision: $candidate replaces pipeline-inlining-oz"
    else
      echo "decision: pipeline-inlining-oz stays"
    fi
  } | tee "$out/$label.txt"
}

against_shipped() {
  local best="" bestLarger="" bestTotal="" name f
  : >"$out/validation.txt"
  for name in "$@"; do
    judge "$name" validation
    f="$out/$name.validation.md"
    echo "$name: validation $(total "$f") %, $(larger "$f") modules larger, $(above "$f") code bases above -Oz" |
      tee -a "$out/validation.txt"
    [ "$(above "$f")" = 0 ] || continue
    if [ -z "$best" ] || [ "$(larger "$f")" -lt "$bestLarger" ] ||
      { [ "$(larger "$f")" = "$bestLarger" ] && awk -v a="$(total "$f")" -v b="$bestTotal" 'BEGIN {exit !(a < b)}'; }; then
      best=$name bestLarger=$(larger "$f") bestTotal=$(total "$f")
    fi
  done
  echo "candidate chosen by the rule: ${best:-none}" | tee -a "$out/validation.txt"
  cp -n "$shipped_policy" "$out/shipped.json"
  judge shipped validation
  chosen=shipped
  local s="$out/shipped.validation.md"
  if [ -n "$best" ] && { [ "$(above "$s")" != 0 ] || [ "$bestLarger" -lt "$(larger "$s")" ]; }; then
    chosen=$best
  fi
  echo "against the shipped pipeline-inlining-oz ($(larger "$s") modules larger): $chosen" |
    tee -a "$out/validation.txt"
}

for_the_record() {
  local holdout=(libyaml lzo2 libjpeg-turbo hunspell snappy double-conversion) name h t
  : >"$out/record.txt"
  for name in "$@"; do
    report_on "$name" "$out/$name.json" holdout "${holdout[@]}"
    judge "$name" test
    h="$out/$name.holdout.md" t="$out/$name.test.md"
    echo "$name: holdout $(total "$h") % ($(larger "$h") larger, $(above "$h") above -Oz); test $(total "$t") % ($(larger "$t") larger, $(above "$t") above -Oz)" |
      tee -a "$out/record.txt"
  done
}

# with_small_inliner CHOICE.json SMALL.policy OUT.json (rounds 19 and 20)
# writes CHOICE with SMALL's inliner (the distilled network) in place of
# its own, the choice unchanged, its description naming the new inliner.
with_small_inliner() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
sys.path.insert(0, "bench")
import policy_file
choice, small = json.load(open(sys.argv[1])), policy_file.load(sys.argv[2])
choice["inliner"] = small["inliner"]
head, _, rest = choice["description"].partition(";")
choice["description"] = head.split(", inliner ")[0] + ", inliner " + small["inliner"]["description"] + ";" + rest
json.dump(choice, open(sys.argv[3], "w"), indent=1)
PY
}

# ship_after_lua_and_test SHIPPED SHIPPED_SMALL (rounds 20 and 21): a Lua
# build with $out/winner.policy against one with SHIPPED (3 paired runs);
# more than 1.10x its CPU and nothing ships (returns 1). Otherwise writes
# the winner with SHIPPED_SMALL's inliner ($out/winner-small.policy) and
# reports both on test, after the choice. The lines in $out/decision.txt.
ship_after_lua_and_test() {
  local shipped=$1 shipped_small=$2 tag ratio name
  tag=$(basename "$out")
  if [ ! -s "$out/build.lua.txt" ]; then
    bench/paired-time.sh 3 "bash bench/deploy/build-once.sh lua /tmp/$tag-a $(realpath "$out/winner.policy")" \
      "bash bench/deploy/build-once.sh lua /tmp/$tag-b $(realpath "$shipped")" >"$out/build.lua.txt.part"
    mv "$out/build.lua.txt.part" "$out/build.lua.txt"
  fi
  ratio=$(sed -n "s/^A\/B cpu median \([0-9.]*\) .*/\1/p" "$out/build.lua.txt")
  if ! awk -v r="$ratio" 'BEGIN {exit !(r <= 1.10)}'; then
    echo "Lua build: ${ratio}x the shipped policy's CPU (more than 1.10x): nothing ships" | tee -a "$out/decision.txt"
    return 1
  fi
  echo "Lua build: ${ratio}x the shipped policy's CPU (at most 1.10x): the winner ships" | tee -a "$out/decision.txt"
  small_and_test winner "$shipped_small"
}

# small_and_test NAME SMALL (rounds 20 and 21, bench/inlining-gate.sh):
# writes $out/NAME-small.policy, $out/NAME.json with SMALL's inliner (the
# distilled network), then reports NAME and NAME-small on test, after the
# choice; the lines in $out/decision.txt.
small_and_test() {
  local name=$1 small=$2 each
  [ -s "$out/$name-small.policy" ] || {
    with_small_inliner "$out/$name.json" "$small" "$out/$name-small.json"
    "$eval" rewrite-policy "$out/$name-small.json" -o "$out/$name-small.policy" --blobs >/dev/null
  }
  for each in "$name" "$name-small"; do
    report_on "$each" "$out/$each.policy" test --split configs/inlining-split.toml --set test
    echo "$each on test: $(total "$out/$each.test.md") %, $(above "$out/$each.test.md") code bases above -Oz" |
      tee -a "$out/decision.txt"
  done
}

# priced_grid DATA SCORED (rounds 22 and 23): round 22's 1,800 candidates
# (six votes, k, margin, novelty, the inliner's price) on DATA, each code
# base left out in turn and scored on the SCORED code bases the inliner
# policy did not train on (the split's training set left out of the score);
# $out/grid.txt and the winner in $out/winner.txt, its fields in k, margin,
# novelty, vote, extra (the inliner's price), ltotal and labove, and its
# line in $out/decision.txt.
priced_grid() {
  local data=$1 scored=$2 trained
  trained=$(sed -n '/^train = \[/,/^\]/p' configs/inlining-split.toml | grep -o '"[^"]*"' | tr -d '"' | paste -sd,)
  [ -s "$out/grid.txt" ] || {
    /usr/bin/python3 bench/choice-loco.py "$data" --columns 0,4,1,5 \
      --votes mean,median,bases,one-per-base,ucb:0.25,ucb:0.5 --inliner-margins 0,0.005,0.01,0.02,inf \
      --score-without "$trained" --rule "$out/winner.txt" >"$out/grid.txt.part"
    mv "$out/grid.txt.part" "$out/grid.txt"
  }
  k=$(winner_field k) margin=$(winner_field margin) novelty=$(winner_field novelty)
  vote=$(winner_field vote) extra=$(winner_field inliner_margin)
  ltotal=$(winner_field total) labove=$(winner_field above)
  echo "winner: vote $vote, k $k, margin $margin, novelty $novelty, inliner margin $extra:" \
    "leaving each code base out, on the $scored the inliner policy did not train on $ltotal %, $labove above -Oz" |
    tee "$out/decision.txt"
}
winner_field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" "$out/winner.txt" | head -1; }

# priced_winner DATA (rounds 22 and 23) writes $out/winner.json and .policy,
# priced_grid's winner with every module of DATA as examples. Returns 1
# when its price is inf (no alternative with the inliner policy: not a
# combined policy), after reporting it on test for the record.
priced_winner() {
  local data=$1 price=()
  [ "$extra" = inf ] || [ "$extra" = 0 ] || price=(--inliner-margin "$extra")
  [ "$extra" != inf ] || price=(--inliner-margin 1000) # never an alternative with the inliner policy
  if [ ! -s "$out/winner.policy" ]; then
    /usr/bin/python3 bench/choice-guard.py "$base" "$v19/fresh.data.tsv" --columns 0,4,1,5 --train "$data" \
      --only "all,$k,$margin,$novelty,0" --vote "$vote" "${price[@]}" --write-policy "$out/winner.json" >/dev/null
    "$eval" rewrite-policy "$out/winner.json" -o "$out/winner.policy" --blobs >/dev/null
  fi
  [ "$extra" = inf ] || return 0
  report_on winner "$out/winner.policy" test --split configs/inlining-split.toml --set test
  echo "an inliner margin of inf is a choice without the inliner policy: nothing ships;" \
    "on test, for the record: $(total "$out/winner.test.md") %, $(above "$out/winner.test.md") above -Oz" |
    tee -a "$out/decision.txt"
  return 1
}
