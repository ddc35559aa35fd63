#!/usr/bin/env bash
# bench/pipeline-v2.sh [OUT]
#
# The pass-pipeline task's second round (docs/pass-pipeline.md), one step
# after the other (2 cores); a finished step (its OUT/NAME.md exists) is not
# run again, so the script resumes where it stopped:
#   1. program: the greedy program search without gvn-sink (weight 1) on the
#      training code, judged on validation and test;
#   2. choice-oz, choice-v2: a per-module choice learned from a pool (-Oz
#      and the program search's pipeline after each of its steps; not the
#      first pipeline-oz, whose gvn-sink the worker cannot measure exactly),
#      with -Oz or the program's pipeline as the fallback, judged on
#      validation and test;
#   3. combined: the program search continued from step 1's pipeline with
#      the shipped inlining policy in every candidate, judged on both sets.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v2}"
mkdir -p "$out"
eval="$build/apps/mlgo-eval"
train=(bzip2 libpng lz4 expat zstd yaml-cpp zlib)
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
# The program's pipeline after each of its steps, as policy files (the
# markdown's step rows: "| N | `-Oz -X +point=passes` | …").
steps_as_policies() {
  python3 - "$out/program.md" "$out" <<'PY'
import json, re, sys
rows = re.findall(r"^\| (\d+) \| `([^`]*)` \|", open(sys.argv[1]).read(), re.M)
for step, text in rows:
    skip, add = [], []
    for token in text.split()[1:]:
        if token.startswith("-"):
            skip.append(token[1:])
        else:
            at, passes = token[1:].split("=", 1)
            add.append({"at": at, "passes": passes})
    policy = {"format": "mlgo-es-policy", "version": 2, "kind": "pipeline",
              "pipeline": {"skip": skip, "add": add}}
    json.dump(policy, open(f"{sys.argv[2]}/program-step{step}.json", "w"))
    print(f"{sys.argv[2]}/program-step{step}.json")
PY
}

search program --regression-weight 1
judge program validation
judge program test

pool=()
for file in $(steps_as_policies); do pool+=(--pool "$file"); done
echo '{"format": "mlgo-es-policy", "version": 2, "kind": "pipeline", "pipeline": {}}' >"$out/oz.json"
search choice-oz --program-search choice "${pool[@]}"
search choice-v2 --program-search choice --start "$out/program.json" --pool "$out/oz.json" "${pool[@]}"
for name in choice-oz choice-v2; do
  judge "$name" validation
  judge "$name" test
done

search combined --start "$out/program.json" --inliner inlining-oz --regression-weight 1
judge combined validation
judge combined test
echo "tables in $out/*.md"
