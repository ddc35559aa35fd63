#!/usr/bin/python3
"""Choosers for the pass-pipeline choice, tried outside the tool.

Usage: bench/choice-models.py TRAIN.tsv VALIDATION.tsv [--set-size 4]

Reads the learning data `mlgo-eval pipeline-search --program-search choice
--choice-data FILE` writes (a row per module: its code base, its features,
every pool pipeline's measure), builds the greedy best-of set on the
training rows as the tool does, and scores choosers among the set:
  - a constant: every module gets the same set pipeline;
  - the tool's nearest-neighbour cost vote (k neighbours, inverse-distance
    weights);
  - ridge regression of each set pipeline's relative change (unweighted, or
    weighted by the module's size);
  - a one-hidden-layer MLP, either regressing the relative changes or as a
    softmax policy minimising the expected bytes (size-weighted).
Each is scored by leaving one training code base out (fit on the others,
choose on it: what an unseen code base gets) and on validation (fit on all
of training). Prints the total change against the fallback, the modules
made larger and the worst code base. Deterministic (fixed seeds). Needs
numpy (Debian's python3-numpy).
"""
import argparse
import csv

import numpy as np


def load(path):
    with open(path) as f:
        rows = list(csv.reader(f, delimiter="\t"))
    head, rows = rows[0], rows[1:]
    fallback = head.index("-Oz")  # the pool's first column
    features = np.array([[float(v) for v in r[2:fallback]] for r in rows])
    measures = np.array([[float(v) for v in r[fallback:]] for r in rows])
    # A pipeline that failed on a module counts as the fallback there.
    measures = np.where(np.isnan(measures), measures[:, [0]], measures)
    return {"x": features, "m": measures, "cb": np.array([r[1] for r in rows]),
            "pool": head[fallback:]}


def greedy_set(measures, size, minimum_gain=0.0005):
    chosen, best = [0], measures[:, 0].copy()
    while len(chosen) < size:
        gains = [-1 if p in chosen else np.maximum(0, best - measures[:, p]).sum()
                 for p in range(measures.shape[1])]
        p = int(np.argmax(gains))
        if gains[p] <= 0 or gains[p] < minimum_gain * measures[:, 0].sum():
            break
        chosen.append(p)
        best = np.minimum(best, measures[:, p])
    return chosen


def relative(measures, chosen):
    return (measures[:, chosen] - measures[:, [0]]) / np.maximum(measures[:, [0]], 1)


def standardise(train, other):
    mean, scale = train.mean(0), train.std(0)
    scale[scale < 1e-12] = 1
    return (train - mean) / scale, (other - mean) / scale


def knn(xs, costs, xt, k):
    picks = []
    for x in xt:
        d = np.sqrt(((xs - x) ** 2).sum(1))
        near = np.argsort(d, kind="stable")[:k]
        w = 1 / (d[near] + 1e-9)
        vote = (w[:, None] * costs[near]).sum(0) / w.sum()
        j = int(np.argmin(vote[1:])) + 1
        picks.append(j if vote[j] < 0 else 0)
    return np.array(picks)


def ridge(xs, costs, xt, weights, strength):
    a = np.hstack([xs, np.ones((len(xs), 1))])
    b = np.hstack([xt, np.ones((len(xt), 1))])
    penalty = strength * np.eye(a.shape[1])
    penalty[-1, -1] = 0
    coef = np.linalg.solve(a.T @ (weights[:, None] * a) + penalty, a.T @ (weights[:, None] * costs))
    return pick_cheapest(b @ coef)


def pick_cheapest(predicted):
    j = predicted.argmin(1)
    return np.where(predicted[np.arange(len(j)), j] < 0, j, 0)


def mlp(xs, costs, xt, weights, regress, hidden=32, epochs=300, rate=0.01, decay=1e-3, seeds=3):
    """Adam on the whole batch; the mean of `seeds` initialisations."""
    w = weights / weights.sum()
    outputs = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        params = [rng.normal(0, 1 / np.sqrt(xs.shape[1]), (xs.shape[1], hidden)), np.zeros(hidden),
                  0.1 * rng.normal(0, 1 / np.sqrt(hidden), (hidden, costs.shape[1])),
                  np.zeros(costs.shape[1])]
        first = [np.zeros_like(p) for p in params]
        second = [np.zeros_like(p) for p in params]
        for t in range(1, epochs + 1):
            h = np.maximum(0, xs @ params[0] + params[1])
            z = h @ params[2] + params[3]
            if regress:  # weighted squared error
                g = 2 * (z - costs) * w[:, None]
            else:  # expected relative change under the softmax, weighted
                p = np.exp(z - z.max(1, keepdims=True))
                p /= p.sum(1, keepdims=True)
                g = p * (costs - (p * costs).sum(1, keepdims=True)) * w[:, None]
            dh = (g @ params[2].T) * (h > 0)
            grads = [xs.T @ dh + decay * params[0], dh.sum(0), h.T @ g + decay * params[2], g.sum(0)]
            for i, grad in enumerate(grads):
                first[i] = 0.9 * first[i] + 0.1 * grad
                second[i] = 0.999 * second[i] + 0.001 * grad * grad
                params[i] -= rate * (first[i] / (1 - 0.9 ** t)) / (
                    np.sqrt(second[i] / (1 - 0.999 ** t)) + 1e-8)
        h = np.maximum(0, xt @ params[0] + params[1])
        outputs.append(h @ params[2] + params[3])
    z = np.mean(outputs, axis=0)
    return pick_cheapest(z) if regress else z.argmax(1)


CHOOSERS = {
    "knn k=5 (the tool's cost vote)": lambda xs, c, xt, w: knn(xs, c, xt, 5),
    "knn k=10": lambda xs, c, xt, w: knn(xs, c, xt, 10),
    "knn k=20": lambda xs, c, xt, w: knn(xs, c, xt, 20),
    "ridge 10": lambda xs, c, xt, w: ridge(xs, c, xt, np.ones(len(xs)), 10),
    "ridge 100": lambda xs, c, xt, w: ridge(xs, c, xt, np.ones(len(xs)), 100),
    "ridge 10, size-weighted": lambda xs, c, xt, w: ridge(xs, c, xt, w / w.mean(), 10),
    "mlp regression, size-weighted": lambda xs, c, xt, w: mlp(xs, c, xt, w, True),
    "mlp softmax, size-weighted": lambda xs, c, xt, w: mlp(xs, c, xt, w, False),
}


def fit_choose(chooser, train, rows, other, chosen):
    xs, xt = standardise(train["x"][rows], other)
    return chooser(xs, relative(train["m"][rows], chosen), xt, train["m"][rows, 0])


def score(measures, chosen, picks, code_bases):
    fallback = measures[:, 0]
    got = measures[np.arange(len(picks)), [chosen[j] for j in picks]]
    worst = max(got[code_bases == c].sum() / fallback[code_bases == c].sum() - 1
                for c in dict.fromkeys(code_bases))
    return (f"{100 * (got.sum() / fallback.sum() - 1):+.3f} % ({int((got > fallback).sum())} "
            f"larger, worst code base {100 * worst:+.3f} %)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("train")
    parser.add_argument("validation")
    parser.add_argument("--set-size", type=int, default=4)
    args = parser.parse_args()
    train, validation = load(args.train), load(args.validation)
    if train["pool"] != validation["pool"]:
        raise SystemExit("the two files were measured with different pools")
    chosen = greedy_set(train["m"], args.set_size)
    print(f"{len(train['m'])} training modules ({len(set(train['cb']))} code bases), "
          f"{len(validation['m'])} validation modules; the set: pool pipelines {chosen}")
    for name, m in (("training", train["m"]), ("validation", validation["m"])):
        best = m[:, chosen].min(1)
        print(f"each module with its best of the set, {name}: "
              f"{100 * (best.sum() / m[:, 0].sum() - 1):+.3f} %")
    print("\n| chooser | training, leave one code base out | validation |\n| --- | --- | --- |")
    for j in range(len(chosen)):
        print(f"| always set pipeline {j} | "
              f"{score(train['m'], chosen, np.full(len(train['m']), j), train['cb'])} | "
              f"{score(validation['m'], chosen, np.full(len(validation['m']), j), validation['cb'])} |")
    for name, chooser in CHOOSERS.items():
        loco = np.zeros(len(train["m"]), dtype=int)
        for code_base in dict.fromkeys(train["cb"]):
            held = train["cb"] == code_base
            loco[held] = fit_choose(chooser, train, ~held, train["x"][held], chosen)
        picks = fit_choose(chooser, train, np.ones(len(train["m"]), bool), validation["x"], chosen)
        print(f"| {name} | {score(train['m'], chosen, loco, train['cb'])} | "
              f"{score(validation['m'], chosen, picks, validation['cb'])} |", flush=True)


if __name__ == "__main__":
    main()
