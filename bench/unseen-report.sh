#!/usr/bin/env bash
# bench/unseen-report.sh [--linked] OUT CODEBASE…
#
# The shipped policies on code bases no round has seen, for the record (no
# choice reads these figures): each policy's `mlgo-eval report` on the
# code bases (their corpora built first if missing), then one table of
# per-code-base figures against -Oz in OUT/summary.md. Alone:
#   pipeline-inlining-oz      both tasks (the pass-pipeline task's shipped choice)
#   pipeline-inlining-oz-small  the same with the distilled inliner
#   pipeline-inlining-oz-v9   round 21's, which round 22 replaced
#   pipeline-inlining-oz-v8   round 20's (the mean vote)
#   pipeline-oz               the pipeline alone, LLVM's inliner
#   inlining-oz               the inliner alone, -Oz's pipeline
#   inlining-oz-gated         the inliner behind its module gate (-Oz's pipeline)
# and behind --mlgo-best-of (each module the smaller of the policy's and
# -Oz's): pipeline-inlining-oz-best-of-half and pipeline-inlining-oz.
# --linked: every report counts each COMDAT group once across a code base's
# objects, as a linker keeps it (mlgo-eval report --linked), not per object.
# Resumable: a finished report is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
count=()
if [ "${1:-}" = --linked ]; then
  count=(--linked)
  shift
fi
[ $# -ge 2 ] || {
  sed -n '2,18p' "$0"
  exit 2
}
out=$1
shift
build="${MLGO_BUILD_DIR:-build}"
eval="$build/apps/mlgo-eval"
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
ensure_corpora "$@"

rows=()
for policy in pipeline-inlining-oz pipeline-inlining-oz-small pipeline-inlining-oz-v9 pipeline-inlining-oz-v8 pipeline-oz inlining-oz \
  inlining-oz-gated; do
  task=(--task pass-pipeline)
  [ "$policy" != inlining-oz ] || task=()
  if [ ! -s "$out/$policy.md" ]; then
    "$eval" report "$policy" "${task[@]}" "${count[@]}" "$@" --markdown "$out/$policy.md.part" \
      --values "$out/$policy.values" >"$out/$policy.log" 2>&1
    mv "$out/$policy.md.part" "$out/$policy.md"
  fi
  rows+=("$policy alone:$out/$policy.md")
done
for policy in pipeline-inlining-oz-best-of-half pipeline-inlining-oz; do
  if [ ! -s "$out/$policy.best-of.md" ]; then
    "$eval" report "$policy" --task pass-pipeline "${count[@]}" "$@" --best-of \
      --markdown "$out/$policy.best-of.md.part" --values "$out/$policy.best-of.values" \
      >"$out/$policy.best-of.log" 2>&1
    mv "$out/$policy.best-of.md.part" "$out/$policy.best-of.md"
  fi
  rows+=("$policy behind --mlgo-best-of:$out/$policy.best-of.md")
done

# One table: a row per policy, a column per code base (its "vs -Oz" cell).
/usr/bin/python3 - "$@" -- "${rows[@]}" >"$out/summary.md" <<'PY'
import sys
args = sys.argv[1:]
split = args.index("--")
bases, rows = args[:split], args[split + 1:]
print("| policy | " + " | ".join(bases) + " | total | above -Oz |")
print("| --- " + "| ---: " * (len(bases) + 2) + "|")
for row in rows:
    name, path = row.rsplit(":", 1)
    cells, total = {}, "?"
    for line in open(path):
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) >= 6 and parts[0] in bases:
            cells[parts[0]] = parts[5].replace(" %", "")
        elif parts and parts[0] == "**total**":
            total = parts[5].replace("*", "").replace(" %", "")
    above = sum(1 for b in bases if float(cells.get(b, "0")) > 0)
    print(f"| {name} | " + " | ".join(cells.get(b, "?") for b in bases) + f" | {total} % | {above} |")
PY
cat "$out/summary.md"
