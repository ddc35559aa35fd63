#!/usr/bin/env bash
# launcher-build.sh BUILD_DIR RECIPE POLICY SCRATCH
#
# Builds RECIPE from source with the mlgo-cc launcher and POLICY (a policy
# file, or "heuristic"/"mixed": made here from the recipe's corpus, or
# "parameters": a pass-pipeline policy with a skipped pass, an added one
# and pass parameters (-Oz run as its text) and a never-inline inliner policy,
# given as MLGO_PIPELINE_POLICY, or
# "pipeline": a pass-pipeline policy with skipped and added passes, given as
# MLGO_PIPELINE_POLICY with no inliner policy, or "choice": a per-module
# choice between -Oz and that pipeline, learned here on the recipe's corpus
# with one neighbour, so that each module gets its own best of the two (its
# features with an IR2Vec embedding, the vocabulary learned here), or
# "choice-inliner": the same with every pipeline also under a constant
# never-inline policy, so that the choice also picks who inlines, and the
# neighbours voting with their costs (--vote cost) behind a novelty guard
# (--novelty 0.9: the file carries a max_distance), learned again from the
# pool's stored measures with --verify-pool-measures, and with one more
# pool pipeline (only its columns compiled, the file grown), or
# "eviction": a random register-allocation eviction policy, given as
# MLGO_EVICTION_POLICY to an -O2 build, judged against the -O2 corpus, or
# "priority": every live range at one priority, given as
# MLGO_PRIORITY_POLICY to an -O2 build, judged by clang processes) and
# checks
#   - parity: per object, the .text bytes equal what `mlgo-eval run POLICY`
#     reports for that module of the extracted corpus;
#   - for the heuristic: every object is byte-identical to the plain -Oz
#     build's (the recipe's own objects, embedded bitcode sections aside);
#   - the built code runs (zlib: `make test`; Lua: the interpreter on a
#     script; ninja: builds a small project).
set -euo pipefail
build="$(realpath "$1")" recipe="$2" policy="$3" scratch="$(realpath -m "$4")"
apps="$build/apps"
level=()
[ "$policy" != eviction ] && [ "$policy" != priority ] || level=(--opt-level O2)
flavour="$recipe${level[1]:+-${level[1]}}"
corpus="$build/corpora/$flavour/corpus"
objects="$build/corpora/$flavour/build"
# shellcheck source=build-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
enter_scratch "$scratch"

task=()
policy_variable=MLGO_POLICY
policy_file=policy.json # what the build reads
# The evaluator's per-module .text under `policy`: "module bytes" lines.
evaluate() {
  "$apps/mlgo-eval" run "$1" "$corpus" --no-baseline-cache "${task[@]}" 2>&1 |
    awk '$2=="ok" && NF==6 {print $1, $4} $2!="ok" && $2!="status" && NF==6 {print "BAD", $0}'
}

case "$policy" in
  heuristic)
    echo '{"format":"mlgo-es-policy","version":1,"kind":"heuristic","inputs":[{"name":"inlining_default","port":0,"shape":[1],"type":"int64_t"}]}' >policy.json
    ;;
  mixed)
    # A random 8-unit MLP over the recipe's features: it inlines some calls
    # and not others (checked below against -Oz, never and always).
    "$apps/mlgo-eval" run heuristic "$corpus" --trace trace.h5 --no-per-module >/dev/null 2>&1
    "$apps/mlgo-eval" vocab trace.h5 -o vocab --quantiles 100 >/dev/null
    "$apps/mlgo-eval" init-mlp --trace trace.h5 --vocab vocab -o policy.json --hidden 8 --seed 1 >/dev/null
    ;;
  pipeline | choice | choice-inliner | parameters)
    cat >policy.json <<'EOF2'
{"format": "mlgo-es-policy", "version": 2, "kind": "pipeline",
 "pipeline": {"skip": ["GVNPass", "LoopRotatePass@late", "InstSimplifyPass"],
              "add": [{"at": "optimizer-last", "passes": "mergefunc,function(instcombine<no-verify-fixpoint>,simplifycfg)"},
                      {"at": "peephole", "passes": "instsimplify"}]}}
EOF2
    [ "$policy" != parameters ] || cat >policy.json <<'EOF2'
{"format": "mlgo-es-policy", "version": 2, "kind": "pipeline",
 "pipeline": {"skip": ["LoopRotatePass@late"],
              "add": [{"at": "optimizer-last", "passes": "mergefunc"}],
              "parameters": {"gvn": "no-pre", "licm": "no-allowspeculation"}},
 "inliner": {"format": "mlgo-es-policy", "version": 2, "kind": "constant", "inputs": [], "advice": 0}}
EOF2
    task=(--task pass-pipeline)
    policy_variable=MLGO_PIPELINE_POLICY
    if [ "$policy" != pipeline ] && [ "$policy" != parameters ]; then
      mv policy.json pipeline.json
      if [ "$policy" = choice ]; then
        "$apps/mlgo-eval" ir2vec-vocab "$corpus" -o vocab.json --epochs 100 >vocab.log 2>&1 ||
          fail "learning an IR2Vec vocabulary failed: $(tail -n 5 vocab.log)"
        # A pool member with pass parameters too: the choice runs -Oz's
        # text for it, and -Oz's own pipeline for the others.
        echo '{"format":"mlgo-es-policy","version":2,"kind":"pipeline","pipeline":{"add":[{"at":"optimizer-last","passes":"mergefunc"}],"parameters":{"gvn":"no-load-pre"}}}' >params.json
        learn=(--set-size 3 --choice-embedding "$scratch/vocab.json" --pool "$scratch/params.json")
      else
        echo '{"format":"mlgo-es-policy","version":2,"kind":"constant","inputs":[],"advice":0}' >never.json
        # With the novelty guard too, so that the file the launcher reads
        # carries a max_distance (a module of the corpus is its own
        # example, so the guard keeps the choice's pick there).
        # The median vote (round 21's), so that the build and the evaluator
        # both read "vote" (with one neighbour it picks what the mean does).
        learn=(--set-size 4 --inliner "$scratch/never.json" --vote cost-median
          --pool-measures "$scratch/pool.tsv" --novelty 0.9)
      fi
      learn_choice() { # OUTPUT EXTRA-FLAGS…
        local output=$1
        shift
        "$apps/mlgo-eval" pipeline-search "$corpus" --program --program-search choice \
          --pool "$scratch/pipeline.json" "${learn[@]}" --neighbours 1 --minimum-gain 0 \
          -o "$output" --markdown choice.md "$@" >choice.log 2>&1 ||
          fail "learning the choice failed: $(tail -n 5 choice.log)"
      }
      learn_choice policy.json
      if [ "$policy" = choice-inliner ]; then
        # The pool's stored measures, verified against the compiler, give
        # the same policy.
        [ -s pool.tsv ] || fail "--pool-measures wrote no file"
        learn_choice again.json --verify-pool-measures
        grep -q 'verifying them' choice.log || fail "--verify-pool-measures compiled nothing"
        cmp -s policy.json again.json || fail "the stored pool measures gave another policy"
        # A larger pool compiles only its new pipelines (twice: with and
        # without the inliner policy) and keeps the stored ones.
        echo '{"format":"mlgo-es-policy","version":2,"kind":"pipeline","pipeline":{"skip":["GVNPass"]}}' >extra.json
        learn_choice larger.json --pool "$scratch/extra.json"
        grep -q '^4 of the pool.s 6 pipelines measured before' choice.log &&
          grep -q '^compiling 2 pool pipelines' choice.log ||
          fail "a larger pool did not reuse the stored measures: $(grep -i pool choice.log)"
        [ "$(head -n 2 pool.tsv | tail -n 1 | tr '\t' '\n' | wc -l)" = 7 ] ||
          fail "the pool file does not hold the larger pool's six pipelines"
      fi
    fi
    if [ "$policy" = choice-inliner ]; then
      grep -q '"heuristic_inliner"' policy.json && grep -q '"inliner"' policy.json ||
        fail "the learned choice gives no module the inliner policy, or every module: $(cat choice.md)"
      grep -q '"costs"' policy.json || fail "the learned choice votes without costs"
      grep -q '"max_distance"' policy.json || fail "the learned choice has no novelty guard"
      grep -q '"vote": *"median"' policy.json || fail "the learned choice does not vote by the median"
      # The build reads the choice in the blob form (policy file version 4):
      # parity with the evaluator's run of the text form below.
      "$apps/mlgo-eval" rewrite-policy policy.json -o policy.policy --blobs >/dev/null ||
        fail "rewrite-policy --blobs failed"
      head -c 200 policy.policy | grep -q '"version": 4' &&
        [ "$(tr -d -c '\000' <policy.policy | wc -c)" -gt 0 ] ||
        fail "policy.policy is not in the blob form"
      policy_file=policy.policy
    elif [ "$policy" = choice ]; then
      grep -q '"embedding"' policy.json || fail "the learned choice reads no IR2Vec embedding"
      grep -q '"parameters"' policy.json || fail "the learned choice holds no pass parameters: $(cat choice.md)"
      # …and gives some module that pipeline (one neighbour: its own label).
      awk -F'|' '/gvn<no-load-pre>/ && $4 + 0 > 0 {found = 1} END {exit !found}' choice.md ||
        fail "no module is given the pipeline with pass parameters: $(cat choice.md)"
    fi
    ;;
  eviction)
    # A random 8-unit candidate-scoring MLP (one ES step from its random
    # start; never evicting is no test policy: some functions run out of
    # registers).
    "$apps/es-train" --corpus "$corpus" --task regalloc-eviction -j 2 --steps 1 --directions 1 \
      --residual-margin 0 --modules-per-step 2 --hidden 8 --vocabulary-quantiles 20 --sigma 0.5 \
      --seed 4 -o es.h5 >es.log 2>&1 || fail "es-train failed: $(tail -n 5 es.log)"
    mv es.json policy.json
    task=(--task regalloc-eviction --measure text-size)
    policy_variable=MLGO_EVICTION_POLICY
    ;;
  priority)
    # The priority task's constant advice: the allocator's queue then orders
    # live ranges by their register numbers alone, which changes most
    # modules' code against -O2 (docs/register-allocation.md).
    echo '{"format":"mlgo-es-policy","version":2,"kind":"constant","inputs":[],"advice":1}' >policy.json
    task=(--task regalloc-priority --backend clang)
    policy_variable=MLGO_PRIORITY_POLICY
    ;;
  *) cp "$policy" policy.json ;;
esac

evaluate policy.json >expected.txt
! grep -q '^BAD' expected.txt || fail "the evaluator failed modules: $(grep '^BAD' expected.txt)"
[ -s expected.txt ] || fail "no module sizes from mlgo-eval"
if [ "$policy" = priority ]; then
  : # no default decision on its channel: compared with the -O2 objects below
elif [ "$policy" = eviction ]; then
  evaluate heuristic >default.txt
  ! cmp -s expected.txt default.txt || fail "the eviction policy compiles every module as -O2 does"
elif [ "$policy" != heuristic ] && [ "$policy" != mixed ]; then
  evaluate neutral >neutral.txt
  ! cmp -s expected.txt neutral.txt || fail "the $policy policy compiles every module as -Oz does"
fi
if [ "$policy" = choice ] || [ "$policy" = choice-inliner ]; then
  evaluate pipeline.json >alone.txt
  ! cmp -s expected.txt alone.txt || fail "the choice compiles every module as the pipeline does"
  # One neighbour on its own training modules: each module's own best, the
  # total the learning claimed.
  claimed=$(sed -n 's/^each module with its best of the set: \([0-9]*\) .*/\1/p' choice.md)
  total=$(awk '{s += $2} END {print s}' expected.txt)
  [ "$claimed" = "$total" ] || fail "the choice compiles $total bytes, its learning claimed $claimed"
fi
if [ "$policy" = mixed ]; then
  for other in heuristic never always; do
    evaluate "$other" >"$other.txt"
    ! cmp -s expected.txt "$other.txt" || fail "the mixed policy decides as '$other' does"
  done
fi

build_recipe() { # WORK-DIR ENVIRONMENT…: the recipe built from source through mlgo-cc
  local work=$1
  shift
  echo "building $recipe with $apps/mlgo-cc $*"
  env "$@" "$source_dir/corpus/recipes/$recipe.sh" \
    --launcher "$apps/mlgo-cc" --work-dir "$work" --force "${level[@]}" >recipe.log 2>&1 ||
    fail "the recipe failed with the launcher: $(tail -n 20 recipe.log)"
  grep -q "mlgo-c" "$work/build.log" || fail "the build did not go through the launcher"
}
build_recipe "$scratch/work" "$policy_variable=$scratch/$policy_file"
built="$scratch/work/build"

text_bytes() {
  "$tools/llvm-size" -A "$1" | awk '$1==".text" || $1 ~ /^\.text\./ {s += $2} END {print s + 0}'
}
mismatches=0 modules=0
while read -r module bytes; do
  modules=$((modules + 1))
  actual="$(text_bytes "$built/$module")"
  if [ "$actual" != "$bytes" ]; then
    echo "  $module: .text $actual B from the launcher, $bytes B in the evaluator"
    mismatches=$((mismatches + 1))
  fi
  if [ "$policy" = heuristic ]; then
    "$tools/llvm-objcopy" --remove-section=.llvmbc --remove-section=.llvmcmd "$built/$module" a.o
    "$tools/llvm-objcopy" --remove-section=.llvmbc --remove-section=.llvmcmd "$objects/$module" b.o
    cmp -s a.o b.o || {
      echo "  $module: not byte-identical to the plain -Oz object"
      mismatches=$((mismatches + 1))
    }
  fi
done <expected.txt
[ "$mismatches" -eq 0 ] || fail "$mismatches differences in $modules modules"
if [ "$policy" = priority ]; then
  changed=0
  while read -r module bytes; do
    [ "$(text_bytes "$objects/$module")" = "$bytes" ] || changed=$((changed + 1))
  done <expected.txt
  [ "$changed" -gt 0 ] || fail "the priority policy compiles every module as -O2 does"
  echo "priority: $changed of $modules objects differ from -O2's"
fi
echo "parity: $modules objects, .text as the evaluator reports$([ "$policy" != heuristic ] || echo ', byte-identical to -Oz')"

# The code still works.
export "$policy_variable=$scratch/$policy_file"
check_programs "$recipe" "$built" "$apps"

if [ "$policy" = choice-inliner ]; then
  # --mlgo-best-of-set compiles every alternative of the set and keeps the
  # smallest object, whatever the choice would pick: with the choice forced
  # to -Oz (alternative 0), it still builds each module's best of the set,
  # which is what one neighbour on its own training modules picks
  # (expected.txt).
  sed 's/"choice": {/"choice": {"forced": 0,/' policy.json >forced.json
  grep -q '"forced": 0' forced.json || fail "could not force the choice"
  evaluate forced.json >forced.txt
  ! cmp -s forced.txt expected.txt || fail "the choice forced to -Oz compiles as the choice does"
  # In the blob form, as the build above: the set's alternatives are
  # written in it too.
  "$apps/mlgo-eval" rewrite-policy forced.json -o forced.policy --blobs >/dev/null ||
    fail "rewrite-policy --blobs failed on forced.json"
  build_recipe "$scratch/work-set" "MLGO_PIPELINE_POLICY=$scratch/forced.policy" MLGO_BEST_OF_SET=1
  differences=0
  while read -r module bytes; do
    actual="$(text_bytes "$scratch/work-set/build/$module")"
    [ "$actual" = "$bytes" ] || {
      echo "  $module: .text $actual B with --mlgo-best-of-set, $bytes B the best of the set"
      differences=$((differences + 1))
    }
  done <expected.txt
  [ "$differences" -eq 0 ] || fail "--mlgo-best-of-set: $differences objects not the best of the set"
  ! ls "$scratch/work-set/build"/*mlgo-alternative* >/dev/null 2>&1 ||
    fail "--mlgo-best-of-set left its alternatives' files behind"
  echo "--mlgo-best-of-set: every object the best of the set"
  MLGO_PIPELINE_POLICY="$scratch/forced.policy" check_programs "$recipe" "$scratch/work-set/build" "$apps"
fi
