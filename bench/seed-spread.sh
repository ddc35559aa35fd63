#!/usr/bin/env bash
# bench/seed-spread.sh OUT RUN… [-- CANDIDATE…]
#
# Run-to-run spread of scripts/train-inlining (issue 33 asks for at least
# two seeds of the whole pipeline). For runs of the same command with other
# --seed values, writes OUT/spread.md:
#   1. every candidate's validation total in each run (the pipeline's own
#      reports, RUN/validation-NAME.md), with the spread (max - min);
#   2. each run's chosen policy (RUN/chosen-policy) on test, per code base
#      (RUN/test.md);
#   3. for each CANDIDATE named after --, its test report in each run, per
#      code base (compiled into OUT/ when the run has no RUN/info/ report),
#      for information: no choice reads it.
# MLGO_BUILD_DIR: the mlgo-es build (default build/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -ge 2 ] || { sed -n '2,16p' "$0"; exit 2; }
out=$1
shift
runs=() candidates=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do runs+=("$1"); shift; done
[ $# -gt 0 ] && { shift; candidates=("$@"); }
eval="${MLGO_BUILD_DIR:-build}/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh" # total()
perBase() { # REPORT.md: "name value" per code base and the total
  grep -E '^\| ([a-z][a-z0-9-]*|\*\*total\*\*) \|' "$1" | awk -F'|' '{gsub(/[ *%]/, "", $2); gsub(/[ *%]/, "", $7); print $2, $7}'
}
spreadRow() { # VALUE…: "v1 | v2 | … | max-min"
  printf '%s\n' "$@" | awk '{v[NR] = $1; if ($1 != "-") {if (n == 0 || $1 > hi) hi = $1; if (n == 0 || $1 < lo) lo = $1; n++}}
    END {for (i = 1; i <= NR; i++) printf "%s %% | ", v[i]; if (n > 1) printf "%.3f", hi - lo; else printf "-"}'
}
{
  header="| candidate |" rule="| --- |"
  for run in "${runs[@]}"; do header+=" $(basename "$run") |"; rule+=" ---: |"; done
  echo "## Validation totals"
  echo
  echo "$header spread (points) |"
  echo "$rule ---: |"
  for report in "${runs[0]}"/validation-*.md; do
    name=${report##*/validation-}
    name=${name%.md}
    values=()
    for run in "${runs[@]}"; do
      f="$run/validation-$name.md"
      if [ -s "$f" ]; then values+=("$(total "$f")"); else values+=(-); fi
    done
    echo "| $name | $(spreadRow "${values[@]}") |"
  done
  echo
  echo "## Each run's chosen policy on test"
  echo
  for run in "${runs[@]}"; do
    echo "- $(basename "$run"): $(basename "$(cat "$run/chosen-policy" 2>/dev/null || echo none)" .json):" \
      "$(perBase "$run/test.md" | awk '{printf "%s %s %%; ", $1, $2}')"
  done
  for name in "${candidates[@]}"; do
    echo
    echo "## $name on test (for information)"
    echo
    for run in "${runs[@]}"; do
      f="$run/info/$name.test.md"
      if [ ! -s "$f" ]; then
        f="$out/$(basename "$run")-$name.test.md"
        [ -s "$f" ] || "$eval" report "$run/$name.json" --split configs/inlining-split.toml --set test \
          --markdown "$f" >"$f.log" 2>&1 || { echo "- $(basename "$run"): report failed ($f.log)"; continue; }
      fi
      echo "- $(basename "$run"): $(perBase "$f" | awk '{printf "%s %s %%; ", $1, $2}')"
    done
  done
} | tee "$out/spread.md"
