#!/usr/bin/env bash
# bench/pipeline-v17-small.sh [OUT]
#
# Round 17's shipped choice with the distilled inliner. pipeline-inlining-oz
# (round 17) builds Lua at about 1.2x plain -Oz's CPU against 1.1x for the
# choice it replaced, though it loads faster: more of Lua's units take an
# alternative with the inliner ensemble ([160,160,80], four members), whose
# network runs at every call site. inlining-oz-small is that ensemble
# distilled into one [40,40,20] network (held-out agreement 99.6 %). This
# round puts it in the choice's place of the ensemble, the choice itself
# (examples, k, margin, novelty guard) unchanged.
#
# The rule, written before this script's first run (the script copies it
# to RULE.txt):
#   1. the variant is judged by the tool's own compiles on round 17's 26
#      validation code bases;
#   2. it ships as pipeline-inlining-oz-small if no validation code base is
#      above -Oz and a Lua build with it costs less CPU than one with
#      pipeline-inlining-oz (3 paired runs, median ratio below 1);
#   3. test is computed after, never to choose.
# Resumable: every finished step is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${MLGO_BUILD_DIR:-build}"
out="${1:-$build/pipeline-v17-small}"
eval="$build/apps/mlgo-eval"
validation=(lua xz box2d ninja libyaml lzo2 libjpeg-turbo hunspell snappy double-conversion
  jq libsodium speex jsoncpp fmtlib tinyxml2 mbedtls libuv1 brotli jansson giflib libogg re2
  muparser gflags pugixml)
mkdir -p "$out"
# shellcheck source=pipeline-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pipeline-lib.sh"
sed -n '/^# The rule/,/^#   3\./p' "$0" | sed 's/^# //' >"$out/RULE.txt"
ensure_corpora "${validation[@]}"

# The variant: the shipped file with inlining-oz-small as its inliner.
variant="$out/pipeline-inlining-oz-small.policy"
if [ ! -s "$variant" ]; then
  /usr/bin/python3 - "$out/variant.json" <<'PY'
import json, sys
sys.path.insert(0, "bench")
import policy_file
policy = policy_file.load("configs/policies/pipeline-inlining-oz-v6.policy")
policy["inliner"] = policy_file.load("configs/policies/inlining-oz-small.policy")
json.dump(policy, open(sys.argv[1], "w"), indent=1)
PY
  "$eval" rewrite-policy "$out/variant.json" -o "$variant" --blobs >/dev/null
fi

# 1. Validation, by the tool's own compiles.
report_on variant "$variant" validation "${validation[@]}"
vabove=$(above "$out/variant.validation.md")
echo "variant on the 26 validation code bases: $(total "$out/variant.validation.md") %, $vabove above -Oz" |
  tee "$out/decision.txt"

# 2. Lua build against pipeline-inlining-oz.
if [ ! -s "$out/build.lua.txt" ]; then
  bench/paired-time.sh 3 "bash bench/deploy/build-once.sh lua /tmp/v17s-a $(realpath "$variant")" \
    "bash bench/deploy/build-once.sh lua /tmp/v17s-b configs/policies/pipeline-inlining-oz-v6.policy" >"$out/build.lua.txt.part"
  mv "$out/build.lua.txt.part" "$out/build.lua.txt"
fi
ratio=$(sed -n "s/^A\/B cpu median \([0-9.]*\) .*/\1/p" "$out/build.lua.txt")
if [ "$vabove" = 0 ] && awk -v r="$ratio" 'BEGIN {exit !(r < 1)}'; then
  echo "Lua build: ${ratio}x pipeline-inlining-oz's CPU, none above -Oz: ships as pipeline-inlining-oz-small" |
    tee -a "$out/decision.txt"
else
  echo "Lua build: ${ratio}x pipeline-inlining-oz's CPU, $vabove above -Oz: nothing ships" |
    tee -a "$out/decision.txt"
fi

# 3. Test, after.
report_on variant "$variant" test --split configs/inlining-split.toml --set test
echo "variant on test: $(total "$out/variant.test.md") %, $(above "$out/variant.test.md") above -Oz" |
  tee -a "$out/decision.txt"
