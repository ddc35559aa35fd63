#!/usr/bin/python3
"""The mean-logit ensemble of MLP policies, as one policy file.

    scripts/ensemble_policies.py POLICY.json... -o ENSEMBLE.json

The policies must share their inputs, vocabulary and architecture (e.g. BC
runs on one trace that differ only in --seed, with one --vocabulary). The
ensemble is one wider MLP that computes the mean of their logits exactly:
the first layers stacked, the hidden layers block-diagonal, the output
weights divided by their number, the biases averaged; a residual margin is
added once, as in each. So mlgo-eval, mlgo-cc and the plugin run it as they
run any MLP policy. An analysis tool (docs/inlining-results.md, section 8):
it measures how much of a policy's result is its seed.
"""

import argparse
import json
import sys

import numpy as np


def layers(flat, sizes):
    """(weights outputs x inputs, bias) per layer; column-major (policies/Mlp.h)."""
    offset, result = 0, []
    for inputs, outputs in zip(sizes[:-1], sizes[1:]):
        weights = np.array(flat[offset : offset + outputs * inputs]).reshape((outputs, inputs), order="F")
        offset += outputs * inputs
        result.append((weights, np.array(flat[offset : offset + outputs])))
        offset += outputs
    if offset != len(flat):
        raise ValueError(f"{len(flat)} parameters do not fit layers {sizes}")
    return result


def network_inputs(policy):
    arch = policy["architecture"]
    widths = arch["hidden_layers"] + [arch["actions"]]
    rest = sum(w * i + w for i, w in zip(widths[:-1], widths[1:]))
    return (len(policy["parameters"]) - rest - widths[0]) // widths[0]


def ensemble(policies):
    base = policies[0]
    for i, other in enumerate(policies[1:], 2):
        for part in ("kind", "inputs", "vocabulary", "architecture"):
            if other.get(part) != base.get(part):
                raise ValueError(f"policy {i} differs from policy 1 in its {part}")
    if base.get("kind") != "mlp":
        raise ValueError(f"only MLP policies can be combined, not {base.get('kind')!r}")
    arch = base["architecture"]
    sizes = [network_inputs(base)] + arch["hidden_layers"] + [arch["actions"]]
    count = len(policies)
    nets = [layers(p["parameters"], sizes) for p in policies]
    flat = []
    for layer in range(len(sizes) - 1):
        weights = [net[layer][0] for net in nets]
        biases = [net[layer][1] for net in nets]
        if layer == 0:  # every member reads the same network inputs
            w, b = np.vstack(weights), np.concatenate(biases)
        elif layer == len(sizes) - 2:  # the mean of the members' logits
            w, b = np.hstack(weights) / count, np.mean(biases, axis=0)
        else:  # each member's hidden units see only its own
            rows, cols = weights[0].shape
            w = np.zeros((rows * count, cols * count))
            for k, member in enumerate(weights):
                w[k * rows : (k + 1) * rows, k * cols : (k + 1) * cols] = member
            b = np.concatenate(biases)
        flat += list(w.reshape(-1, order="F")) + list(b)
    result = dict(base)
    result["architecture"] = dict(arch, hidden_layers=[h * count for h in arch["hidden_layers"]])
    result["parameters"] = [float(x) for x in flat]
    result["description"] = f"mean of {count}: {base.get('description', 'mlp')}"
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policies", nargs="+", help="MLP policy files with one architecture and vocabulary")
    parser.add_argument("-o", "--output", required=True, help="the ensemble's policy file")
    args = parser.parse_args()
    try:
        policies = []
        for path in args.policies:
            with open(path) as f:
                policies.append(json.load(f))
        combined = ensemble(policies)
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"ensemble_policies: {error}")
    with open(args.output, "w") as f:
        json.dump(combined, f)
    print(f"ensemble of {len(policies)} policies: {args.output}")


if __name__ == "__main__":
    main()
