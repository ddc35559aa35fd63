#!/usr/bin/env bash
# mlgo-eval ensemble: the mean of MLPs' logits as one wider MLP.
# An ensemble of a policy with itself must compile every module to the same
# size as the policy (the real evaluator reads the combined layout); the
# ensemble of two must compute the mean of their logits; policies with
# another vocabulary are refused. Usage: MLGO_EVAL CORPUS
set -euo pipefail
eval_tool=$1
corpus=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$eval_tool" run heuristic "$corpus" --trace "$out/trace.h5" --no-per-module >/dev/null 2>&1
"$eval_tool" vocab "$out/trace.h5" -o "$out/vocab" >/dev/null
for seed in 1 2; do
  "$eval_tool" init-mlp --trace "$out/trace.h5" --vocab "$out/vocab" --hidden 16 8 --seed $seed \
    -o "$out/p$seed.json" >/dev/null
done
"$eval_tool" ensemble "$out/p1.json" "$out/p1.json" -o "$out/twice.json" >/dev/null
"$eval_tool" ensemble "$out/p1.json" "$out/p2.json" -o "$out/pair.json" >/dev/null

# Per-module rows of mlgo-eval run: "name ok decisions size -Oz delta".
sizes() { "$eval_tool" run "$1" "$corpus" 2>/dev/null | awk '$2 == "ok" && NF == 6 { print $1, $4 }'; }
sizes "$out/p1.json" >"$out/p1.sizes"
sizes "$out/twice.json" >"$out/twice.sizes"
[ -s "$out/p1.sizes" ] || { echo "no module compiled with the random MLP"; exit 1; }
diff "$out/p1.sizes" "$out/twice.sizes" ||
  { echo "an ensemble of a policy with itself compiled differently"; exit 1; }
"$eval_tool" run "$out/pair.json" "$corpus" --no-per-module 2>/dev/null | grep -q ', 0 failed' ||
  { echo "the ensemble of two policies failed to compile some module"; exit 1; }
echo "ensemble of a policy with itself: $(wc -l <"$out/p1.sizes") modules, the same sizes"

# The pair's logits are the mean of the members' (network inputs drawn at
# random; the forward pass written out here, independently of the tool).
"$PY" - "$out/p1.json" "$out/p2.json" "$out/pair.json" <<'PY'
import base64, json, sys
import numpy as np
def parameters(policy):
    # version 2: little-endian doubles in base64 (docs: PolicyFile.h)
    p = policy["parameters"]
    assert p["encoding"] == "float64-le-base64", p["encoding"]
    return np.frombuffer(base64.b64decode(p["data"]), dtype="<f8")
def forward(policy, x):
    arch = policy["architecture"]
    widths = arch["hidden_layers"] + [arch["actions"]]
    flat, offset, h = parameters(policy), 0, x
    for i, width in enumerate(widths):
        inputs = h.shape[0]
        w = flat[offset:offset + width * inputs].reshape((width, inputs), order="F")
        offset += width * inputs
        h = w @ h + flat[offset:offset + width]
        offset += width
        if i < len(widths) - 1:
            h = np.maximum(h, 0)
    assert offset == len(flat), "parameters left over"
    return h
p1, p2, pair = (json.load(open(p)) for p in sys.argv[1:])
inputs = (len(parameters(p1)) - (16 * 8 + 8) - (8 * 2 + 2) - 16) // 16
rng = np.random.default_rng(0)
for _ in range(20):
    x = rng.uniform(0, 1, inputs)
    expected = (forward(p1, x) + forward(p2, x)) / 2
    assert np.allclose(forward(pair, x), expected, atol=1e-12), (forward(pair, x), expected)
print("ensemble of two: the mean of their logits on 20 random inputs")
PY

"$PY" - "$out/p2.json" "$out/other.json" <<'PY'
import base64, json, struct, sys
p = json.load(open(sys.argv[1]))
name = sorted(p["vocabulary"])[0]
# {"values": distinct values (version 3: float64-le in base64), "counts": …}
entry = p["vocabulary"][name]
raw = base64.b64decode(entry["values"])
values = struct.unpack("<%dd" % (len(raw) // 8), raw)
entry["values"] = base64.b64encode(struct.pack("<%dd" % len(values), *[v + 1 for v in values])).decode()
json.dump(p, open(sys.argv[2], "w"))
PY
if "$eval_tool" ensemble "$out/p1.json" "$out/other.json" -o "$out/bad.json" 2>"$out/bad.log"; then
  echo "policies with different vocabularies were combined"
  exit 1
fi
grep -q "policy 2 differs from policy 1 in its vocabulary" "$out/bad.log" ||
  { echo "unexpected error:"; cat "$out/bad.log"; exit 1; }
echo "policies with another vocabulary refused"
