#!/usr/bin/env bash
# The whole inlining pipeline in its short mode (zlib trains, Lua validates
# and tests): search from -Oz, search again from a learned policy's
# decisions (DAgger), the searched trace, BC candidates (the byte-weighted
# ones as ensembles of seeds, mean and unanimous), the choice on validation behind the per-module
# guard, the distilled network, a short ES fine-tuning of it, its confidence
# margins, the test reports; with --callee-consistent, group trials in the
# DAgger search and every candidate's consistent twin judged beside it.
# Usage: pipeline-short.sh OUT TRAIN-INLINING
set -euo pipefail
out=$1 pipeline=$2
rm -rf "$out"
"$pipeline" --short --best-of --es-share 0.1 --callee-consistent --out "$out" | tee "$out.log"
fail() { echo "pipeline-short: $*" >&2; exit 1; }
# Both searches ran and wrote tried decisions; the second started from the
# policy trained on the first.
for f in search.done dagger.done dagger-start.json tried.trace.h5 dagger.trace.h5; do
  [ -f "$out/$f" ] || fail "$f missing"
done
grep -q 'from policy .*dagger-start.json' "$out/dagger.log" || fail "the second search did not start from dagger-start.json"
/usr/bin/python3 - "$out" <<'PY'
import json, sys, h5py
out = sys.argv[1]
for trace in ("tried.trace.h5", "dagger.trace.h5"):
    with h5py.File(f"{out}/{trace}", "r") as f:
        rows = f["modules/name"].shape[0]
        assert rows > 0, f"{trace}: no tried decisions"
# The byte-weighted candidate is the mean of four seeds: four times as wide.
member = json.load(open(f"{out}/tried-1-seed1.json"))["architecture"]["hidden_layers"]
ensemble = json.load(open(f"{out}/tried-1.json"))["architecture"]["hidden_layers"]
assert ensemble == [4 * w for w in member], (member, ensemble)
# Its unanimous twin: the same stacked members, each keeping its outputs.
unanimous = json.load(open(f"{out}/unanimous-tried-1.json"))["architecture"]
assert unanimous["hidden_layers"] == ensemble and unanimous["unanimous_members"] == 4, unanimous
PY
# The unanimous ensemble was a candidate on validation.
[ -f "$out/validation-unanimous-tried-1.best-of.values" ] || fail "the unanimous ensemble was not judged on validation"
# Group trials: the DAgger search's flips are callee-consistent, and every
# candidate's consistent twin was judged on validation.
grep -q '"callee_consistent": true' "$out/dagger-flips.json" || fail "the DAgger search was not callee-consistent"
for name in imitation-0.3 tried-1 unanimous-tried-1; do
  grep -q '"callee_consistent": true' "$out/consistent-$name.json" || fail "consistent-$name.json is not consistent"
  [ -f "$out/validation-consistent-$name.best-of.values" ] || fail "consistent-$name was not judged on validation"
done
# The chosen candidate was distilled into one [40,40,20] MLP (bc-train
# --teacher), and that network was judged alone at two margins.
[ -f "$out/student.json" ] || fail "no distilled student.json"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
student = json.load(open(f"{out}/student.json"))["architecture"]
assert student["hidden_layers"] == [40, 40, 20], student
margins = [json.load(open(f"{out}/confident-{f}.json"))["architecture"]["residual"]["margin"] for f in (1, 4)]
assert abs(margins[1] - 4 * margins[0]) < 1e-9, margins
PY
for factor in 1 4; do
  # (consistent-confident-F when the choice was a consistent twin)
  grep -Eq "^(consistent-)?confident-$factor: lua [+-][0-9.]* %;" "$out/confidence.log" ||
    fail "confidence.log has no confident-$factor"
done
# ES fine-tuned the distilled network (language-stratified steps, total
# bytes) and validation judged it beside the network it started from.
[ -f "$out/es.json" ] || fail "no es.json from stage 6b"
"${MLGO_BUILD_DIR:-build}/apps/mlgo-results" config "$out/es.h5" |
  grep -q '^module-sampling = "language-stratified"' || fail "ES did not sample by language"
[ "$(grep -c ': lua [+-][0-9.]* %;' "$out/es-choice.log")" -eq 2 ] || fail "es-choice.log has not both candidates"
# The test report has Lua's 34 modules, none failed.
grep -Eq '^\| lua \| 34 \| 0 \| [0-9]+ \| [0-9]+ \|' "$out/test.md" || fail "no Lua row in test.md"
# mlgo-eval choose judged every candidate (one line each) and the verdict
# came from the test report's values.
[ "$(grep -c ': lua [+-][0-9.]* %;' "$out/choice.log")" -ge 2 ] || fail "choice.log has not every candidate"
grep -q 'verdict on .*: [+-][0-9.]* % total .text vs -Oz, ' "$out.log" || fail "no verdict"
echo "pipeline-short: ok"
