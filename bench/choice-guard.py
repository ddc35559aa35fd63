#!/usr/bin/python3
"""Guards for a shipped pipeline choice, scored on code bases outside training.

Usage: bench/choice-guard.py POLICY.json DATA.tsv --columns 0,4,1,5 [--markdown F]

POLICY.json is a pipeline policy with a cost-vote choice (its training
examples, scaled features and per-alternative costs, are in the file).
DATA.tsv is `mlgo-eval pipeline-search … --program-search choice
--choice-data` on other code bases: a row per module with its features and
its measure under every pool pipeline; --columns names the pool column of
each of the choice's alternatives, in the choice's order.

Each candidate is the policy's own vote (PipelineChoice::choose: the k
nearest examples, weights 1 / (distance + 1e-9), each alternative's
weighted mean cost, the cheapest unless it does not undercut the fallback
by more than the margin) with, on top, two guards a module must pass for
any alternative but the fallback:
  - novelty: the nearest example no farther than the q-quantile of the
    examples' own nearest-other-example distances (a module unlike every
    training module keeps -Oz);
  - agreement: the chosen alternative cheaper than the fallback on at least
    this share of the neighbours' weight (a mean carried by one neighbour
    does not count).
Prints, per candidate, the total change against the fallback, the modules
larger, the code bases above the fallback and the worst one; with
--markdown also a table per code base. Deterministic; needs numpy.
"""
import argparse
import base64
import csv
import itertools
import json

import numpy as np


def doubles(text, width):
    values = np.frombuffer(base64.b64decode(text), dtype="<f8")
    return values.reshape(-1, width) if width else values


def load_choice(path):
    choice = json.load(open(path))["choice"]
    n = len(choice["pipelines"])
    width = len(choice["features"])
    examples = choice["examples"]
    if examples["encoding"] != "float64-le-base64" or "costs" not in examples:
        raise SystemExit(f"{path}: not a cost-vote choice with base64 examples")

    def numbers(field):
        value = choice[field]
        return doubles(value["data"], 0) if isinstance(value, dict) else np.array(value, float)

    return {"x": doubles(examples["features"], width), "costs": doubles(examples["costs"], n),
            "mean": numbers("mean"), "scale": numbers("scale"), "features": choice["features"],
            "k": choice["neighbours"], "margin": choice.get("margin", 0.0)}


def load_data(path, columns, feature_names):
    with open(path) as f:
        rows = list(csv.reader(f, delimiter="\t"))
    head, rows = rows[0], rows[1:]
    first = 2 + len(feature_names)
    if head[2:first] != feature_names:
        raise SystemExit(f"{path}: its features are not the policy's")
    measures = np.array([[float(r[first + c]) for c in columns] for r in rows])
    return {"x": np.array([[float(v) for v in r[2:first]] for r in rows]), "m": measures,
            "cb": np.array([r[1] for r in rows]), "module": [r[0] for r in rows],
            "pool": [head[first + c] for c in columns]}


def nearest_other(xs):
    """Each example's distance to its nearest other example."""
    out = np.empty(len(xs))
    for i, x in enumerate(xs):
        d = np.sqrt(((xs - x) ** 2).sum(1))
        d[i] = np.inf
        out[i] = d.min()
    return out


def choose(choice, scaled, k, margin, max_distance, agreement):
    picks = []
    for x in scaled:
        d = np.sqrt(((choice["x"] - x) ** 2).sum(1))
        near = np.argsort(d, kind="stable")[:k]
        w = 1 / (d[near] + 1e-9)
        costs = choice["costs"][near]
        vote = (w[:, None] * costs).sum(0) / w.sum()
        j = int(np.argmin(vote[1:])) + 1
        ok = vote[j] < -margin and d[near[0]] <= max_distance
        ok = ok and (w * (costs[:, j] < 0)).sum() >= agreement * w.sum()
        picks.append(j if ok else 0)
    return np.array(picks)


def score(data, picks):
    m = data["m"]
    got = m[np.arange(len(picks)), picks]
    fallback = m[:, 0]
    per = {c: (got[data["cb"] == c].sum(), fallback[data["cb"] == c].sum())
           for c in dict.fromkeys(data["cb"])}
    above = [c for c, (g, f) in per.items() if g > f]
    return {"total": 100 * (got.sum() / fallback.sum() - 1), "larger": int((got > fallback).sum()),
            "above": above, "per": per,
            "worst": max(100 * (g / f - 1) for g, f in per.values())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("policy")
    parser.add_argument("data")
    parser.add_argument("--columns", required=True,
                        help="the pool column of each of the choice's alternatives")
    parser.add_argument("--neighbours", default="10,20,40")
    parser.add_argument("--margins", default="0,0.005,0.01,0.02,0.04")
    parser.add_argument("--novelty", default="1,0.95,0.8",
                        help="quantiles of the examples' nearest-other distances (1: off)")
    parser.add_argument("--agreement", default="0,0.6")
    parser.add_argument("--markdown", help="a table per code base for every candidate")
    parser.add_argument("--rule", help="write round 13's winner here (bench/pipeline-v13.sh)")
    parser.add_argument("--picks", help="each module's alternative under --only, as TSV")
    parser.add_argument("--only", help="one candidate: k,margin,novelty,agreement")
    args = parser.parse_args()
    choice = load_choice(args.policy)
    data = load_data(args.data, [int(c) for c in args.columns.split(",")], choice["features"])
    scaled = (data["x"] - choice["mean"]) / choice["scale"]
    distances = nearest_other(choice["x"])
    print(f"{len(choice['x'])} examples, {len(data['m'])} modules of {len(set(data['cb']))} "
          f"code bases; alternatives: {data['pool']}")
    grid = [tuple(float(v) for v in args.only.split(","))] if args.only else itertools.product(
        *[[float(v) for v in s.split(",")]
          for s in (args.neighbours, args.margins, args.novelty, args.agreement)])
    results = []
    print("| k | margin | novelty | agreement | total | larger | above | worst |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for k, margin, novelty, agreement in grid:
        limit = np.inf if novelty >= 1 else float(np.quantile(distances, novelty))
        picks = choose(choice, scaled, int(k), margin, limit, agreement)
        s = score(data, picks)
        results.append(((int(k), margin, novelty, agreement, limit), s, picks))
        print(f"| {int(k)} | {margin:g} | {novelty:g} ({limit:.3f}) | {agreement:g} | "
              f"{s['total']:+.3f} % | {s['larger']} | {', '.join(s['above']) or 'none'} | "
              f"{s['worst']:+.3f} % |", flush=True)
    if args.markdown:
        with open(args.markdown, "w") as out:
            bases = list(dict.fromkeys(data["cb"]))
            out.write("| k | margin | novelty | agreement | " + " | ".join(bases) + " | total |\n")
            out.write("| ---: " * 4 + "| ---: " * (len(bases) + 1) + "|\n")
            for (k, margin, novelty, agreement, _), s, _ in results:
                cells = [f"{100 * (s['per'][c][0] / s['per'][c][1] - 1):+.3f}" for c in bases]
                out.write(f"| {k} | {margin:g} | {novelty:g} | {agreement:g} | "
                          + " | ".join(cells) + f" | {s['total']:+.3f} |\n")
    if args.rule:
        # No code base above the fallback first, then the smallest total.
        (k, margin, novelty, agreement, limit), s, _ = min(
            results, key=lambda r: (len(r[1]["above"]), r[1]["total"]))
        with open(args.rule, "w") as out:
            out.write(f"k={k} margin={margin:g} novelty={novelty:g} max_distance={limit!r} "
                      f"agreement={agreement:g} total={s['total']:+.3f} "
                      f"above={len(s['above'])} larger={s['larger']}\n")
    if args.picks and args.only:
        with open(args.picks, "w") as out:
            for module, cb, p in zip(data["module"], data["cb"], results[0][2]):
                out.write(f"{cb}\t{module}\t{p}\n")


if __name__ == "__main__":
    main()
