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
weighted mean cost, or with --vote median its weighted median, the
cheapest unless it does not undercut the fallback by more than the margin)
with, on top, two guards a module must pass for
any alternative but the fallback:
  - novelty: the nearest example no farther than the q-quantile of the
    examples' own nearest-other-example distances (a module unlike every
    training module keeps -Oz);
  - agreement: the chosen alternative cheaper than the fallback on at least
    this share of the neighbours' weight (a mean carried by one neighbour
    does not count).
With --train (the same learning data on the training modules, the same
pool), two more things (round 14): the examples may be every training
module instead of the policy's own (`--examples all`: features scaled
and costs computed as `pipeline-search` does), and the novelty threshold
may be calibrated across code bases (`cross:Q`: the Q-quantile of each
example's distance to the nearest example of another code base, what an
unseen code base's module meets) rather than among all examples (`Q`).
`--examples all+ridge` (round 18) is every training module with a second
opinion: a ridge regression of each alternative's relative change on the
scaled features (size-weighted, lambda 10), which must also predict the
vote's winner cheaper than the fallback (PipelineChoice's `confirm`).
Prints, per candidate, the total change against the fallback, the modules
larger, the code bases above the fallback and the worst one (with
--best-of instead: behind mlgo-cc --mlgo-best-of, each module the smaller
of its alternative and the fallback, and the share of modules, and of
their -Oz bytes, that take another alternative: those the guard compiles
twice, the rest it compiles once); with
--markdown also a table per code base; with --only and --write-policy the
candidate as a policy file. --inliner-margin M (round 22) prices the
alternatives that carry the inliner policy (their pool column named "…,
inliner policy"): their vote counts M worse (PipelineChoice's
`inliner_margin`). Deterministic; needs numpy.
"""
import argparse
import base64
import csv
import itertools
import json

import numpy as np

import policy_file
from choice_vote import carries_inliner, cost_vote


def doubles(text, width):
    values = np.frombuffer(base64.b64decode(text), dtype="<f8")
    return values.reshape(-1, width) if width else values


def load_choice(path):
    choice = policy_file.load(path)["choice"]
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


def nearest_other(xs, code_bases=None):
    """Each example's distance to its nearest other example (of another
    code base, with code_bases)."""
    out = np.empty(len(xs))
    for i, x in enumerate(xs):
        d = np.sqrt(((xs - x) ** 2).sum(1))
        d[i] = np.inf
        if code_bases is not None:
            d[code_bases == code_bases[i]] = np.inf
        out[i] = d.min()
    return out


def examples_from(train, name):
    """The choice's examples from learning data, as PipelineChoice learns
    them: mean and population scale over the modules, scaled features,
    costs against the fallback; a module whose fallback failed is left out
    and a failed alternative counts as the fallback."""
    keep = ~np.isnan(train["m"][:, 0])
    x, m = train["x"][keep], train["m"][keep]
    m = np.where(np.isnan(m), m[:, [0]], m)
    mean = x.mean(0)
    variance = ((x - mean) ** 2).mean(0)
    scale = np.where(variance > 1e-12, np.sqrt(variance), 1.0)
    costs = (m - m[:, [0]]) / np.maximum(m[:, [0]], 1)
    return {"name": name, "x": (x - mean) / scale, "costs": costs, "mean": mean, "scale": scale,
            "labels": m.argmin(1), "cb": train["cb"][keep], "sizes": m[:, 0]}


def with_confirm(examples, name, strength=10.0):
    """The examples with a second opinion (round 18): ridge regression of
    each alternative's relative change on the scaled features, each example
    weighted by its fallback size (relative to the mean), the intercept not
    penalised; (features + 1) x alternatives weights, as PipelineChoice's
    `confirm` reads them."""
    a = np.hstack([examples["x"], np.ones((len(examples["x"]), 1))])
    w = examples["sizes"] / examples["sizes"].mean()
    penalty = strength * np.eye(a.shape[1])
    penalty[-1, -1] = 0
    coef = np.linalg.solve(a.T @ (w[:, None] * a) + penalty, a.T @ (w[:, None] * examples["costs"]))
    return dict(examples, name=name, confirm=coef)


def code_bases_of(examples, train):
    """Each of the policy's examples' code base: the training module whose
    features, scaled as the policy scales, are the example's."""
    scaled = (train["x"] - examples["mean"]) / examples["scale"]
    out = []
    for x in examples["x"]:
        d = ((scaled - x) ** 2).sum(1)
        j = int(d.argmin())
        if d[j] > 1e-12:
            raise SystemExit("an example of the policy is not among the training modules")
        out.append(train["cb"][j])
    return np.array(out)


def threshold(examples, spec):
    """'1': off; 'Q': quantile among all examples; 'cross:Q': across code bases."""
    if spec == "1":
        return np.inf
    if spec.startswith("cross:"):
        if examples.get("cb") is None:
            raise SystemExit("cross-code-base novelty needs --train")
        key, q = "cross", float(spec[6:])
    else:
        key, q = "within", float(spec)
    if key not in examples:
        examples[key] = nearest_other(examples["x"], examples["cb"] if key == "cross" else None)
    return float(np.quantile(examples[key], q))


def write_policy(base, examples, k, margin, limit, agreement, path, vote="mean", inliner_margin=0.0):
    policy = policy_file.load(base)
    choice = policy["choice"]
    choice["neighbours"] = k
    for field in ("margin", "max_distance", "agreement", "vote", "inliner_margin"):
        choice.pop(field, None)
    if margin > 0:
        choice["margin"] = margin
    if inliner_margin > 0:
        choice["inliner_margin"] = inliner_margin
    if vote != "mean":
        choice["vote"] = vote
    if np.isfinite(limit):
        choice["max_distance"] = limit
    if agreement > 0:
        choice["agreement"] = agreement
    choice.pop("confirm", None)
    if examples.get("confirm") is not None:
        choice["confirm"] = [float(v) for v in examples["confirm"].ravel()]
    if examples["name"] != "shipped":
        choice["mean"], choice["scale"] = list(examples["mean"]), list(examples["scale"])
        encode = lambda a: base64.b64encode(np.ascontiguousarray(a, "<f8").tobytes()).decode()
        choice["examples"] = {"encoding": "float64-le-base64",
                              "pipelines": [int(v) for v in examples["labels"]],
                              "features": encode(examples["x"]), "costs": encode(examples["costs"])}
    count = "" if examples["name"] == "shipped" else f"{len(examples['x'])} examples, "
    policy["description"] = (
        f"{policy['description'].split(';')[0]}; {count}"
        + (f"{vote} vote, " if vote != "mean" else "") + f"k {k}, margin {margin:g}"
        + (f", inliner margin {inliner_margin:g}" if inliner_margin > 0 else "")
        + (f", max distance {limit:.4f}" if np.isfinite(limit) else "")
        + (f", agreement {agreement:g}" if agreement > 0 else "")
        + (", confirmed by ridge regression" if examples.get("confirm") is not None else ""))
    json.dump(policy, open(path, "w"), indent=1)


def choose(choice, scaled, k, margin, max_distance, agreement, kind="mean", priced=None):
    """Each module's alternative; `priced`, with an inliner margin, is what
    each alternative's vote counts worse by."""
    picks = []
    for x in scaled:
        d = np.sqrt(((choice["x"] - x) ** 2).sum(1))
        near = np.argsort(d, kind="stable")[:k]
        w = 1 / (d[near] + 1e-9)
        costs = choice["costs"][near]
        vote = cost_vote(kind, d[near], costs, None)
        if priced is not None:
            vote = vote + priced
        j = int(np.argmin(vote[1:])) + 1
        ok = vote[j] < -margin and d[near[0]] <= max_distance
        ok = ok and (w * (costs[:, j] < 0)).sum() >= agreement * w.sum()
        if ok and choice.get("confirm") is not None:
            ok = float(x @ choice["confirm"][:-1, j] + choice["confirm"][-1, j]) < 0
        picks.append(j if ok else 0)
    return np.array(picks)


def score(data, picks, best_of=False):
    m = data["m"]
    got = m[np.arange(len(picks)), picks]
    fallback = m[:, 0]
    if best_of:
        got = np.minimum(got, fallback)
    per = {c: (got[data["cb"] == c].sum(), fallback[data["cb"] == c].sum())
           for c in dict.fromkeys(data["cb"])}
    above = [c for c, (g, f) in per.items() if g > f]
    return {"total": 100 * (got.sum() / fallback.sum() - 1), "larger": int((got > fallback).sum()),
            "above": above, "per": per,
            "worst": max(100 * (g / f - 1) for g, f in per.values()),
            "twice": (picks != 0).mean(), "twice_bytes": fallback[picks != 0].sum() / fallback.sum()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("policy")
    parser.add_argument("data")
    parser.add_argument("--columns", required=True,
                        help="the pool column of each of the choice's alternatives")
    parser.add_argument("--train", help="the learning data of the training modules")
    parser.add_argument("--examples", default="shipped",
                        help="shipped, all, both (shipped,all), or a list of shipped, all and "
                             "all+ridge (every training module, with the ridge second opinion)")
    parser.add_argument("--neighbours", default="10,20,40")
    parser.add_argument("--margins", default="0,0.005,0.01,0.02,0.04")
    parser.add_argument("--novelty", default="1,0.95,0.8",
                        help="1 (off), Q (quantile of the examples' nearest-other distances) or "
                             "cross:Q (of their distances to another code base's nearest)")
    parser.add_argument("--agreement", default="0,0.6")
    parser.add_argument("--vote", default="mean", choices=("mean", "median"),
                        help="how the neighbours' costs vote (PipelineChoice's vote)")
    parser.add_argument("--inliner-margin", type=float, default=0.0,
                        help="how much worse the alternatives with the inliner policy vote")
    parser.add_argument("--best-of", action="store_true",
                        help="score behind --mlgo-best-of, with the share compiled twice")
    parser.add_argument("--markdown", help="a table per code base for every candidate")
    parser.add_argument("--rule", help="write the round's winner here (bench/pipeline-v13.sh)")
    parser.add_argument("--picks", help="each module's alternative under --only, as TSV")
    parser.add_argument("--only", help="one candidate: [examples,]k,margin,novelty,agreement")
    parser.add_argument("--write-policy", help="with --only: the candidate as a policy file")
    args = parser.parse_args()
    columns = [int(c) for c in args.columns.split(",")]
    shipped = load_choice(args.policy)
    shipped["name"] = "shipped"
    data = load_data(args.data, columns, shipped["features"])
    sets = {"shipped": shipped}
    if args.train:
        train = load_data(args.train, columns, shipped["features"])
        shipped["cb"] = code_bases_of(shipped, train)
        sets["all"] = examples_from(train, "all")
        sets["all+ridge"] = with_confirm(sets["all"], "all+ridge")
    if args.only:
        fields = args.only.split(",")
        names = [fields.pop(0)] if len(fields) == 5 else ["shipped"]
        grid = [(names[0], int(fields[0]), float(fields[1]), fields[2], float(fields[3]))]
    else:
        names = ["shipped", "all"] if args.examples == "both" else args.examples.split(",")
        grid = itertools.product(names, [int(v) for v in args.neighbours.split(",")],
                                 [float(v) for v in args.margins.split(",")],
                                 args.novelty.split(","),
                                 [float(v) for v in args.agreement.split(",")])
    for name in names:
        if name not in sets:
            raise SystemExit(f"examples {name}: unknown, or needs --train")
        print(f"examples {name}: {len(sets[name]['x'])}")
    print(f"{len(data['m'])} modules of {len(set(data['cb']))} code bases; alternatives: "
          f"{data['pool']}")
    priced = None
    if args.inliner_margin > 0:
        priced = args.inliner_margin * carries_inliner(data["pool"])
    results = []
    if args.best_of:
        print("| examples | k | margin | novelty | agreement | behind the guard | modules "
              "compiled twice | their -Oz bytes |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print("| examples | k | margin | novelty | agreement | total | larger | above | worst |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for name, k, margin, novelty, agreement in grid:
        examples = sets[name]
        limit = threshold(examples, novelty)
        scaled = (data["x"] - examples["mean"]) / examples["scale"]
        picks = choose(examples, scaled, k, margin, limit, agreement, args.vote, priced)
        s = score(data, picks, args.best_of)
        results.append(((name, k, margin, novelty, agreement, limit), s, picks))
        if args.best_of:
            print(f"| {name} | {k} | {margin:g} | {novelty} ({limit:.3f}) | {agreement:g} | "
                  f"{s['total']:+.3f} % | {100 * s['twice']:.1f} % | "
                  f"{100 * s['twice_bytes']:.1f} % |", flush=True)
            continue
        print(f"| {name} | {k} | {margin:g} | {novelty} ({limit:.3f}) | {agreement:g} | "
              f"{s['total']:+.3f} % | {s['larger']} | {', '.join(s['above']) or 'none'} | "
              f"{s['worst']:+.3f} % |", flush=True)
    if args.markdown:
        with open(args.markdown, "w") as out:
            bases = list(dict.fromkeys(data["cb"]))
            out.write("| examples | k | margin | novelty | agreement | " + " | ".join(bases)
                      + " | total |\n")
            out.write("| --- " + "| ---: " * (len(bases) + 5) + "|\n")
            for (name, k, margin, novelty, agreement, _), s, _ in results:
                cells = [f"{100 * (s['per'][c][0] / s['per'][c][1] - 1):+.3f}" for c in bases]
                out.write(f"| {name} | {k} | {margin:g} | {novelty} | {agreement:g} | "
                          + " | ".join(cells) + f" | {s['total']:+.3f} |\n")
    if args.rule:
        # No code base above the fallback first, then the smallest total.
        (name, k, margin, novelty, agreement, limit), s, _ = min(
            results, key=lambda r: (len(r[1]["above"]), r[1]["total"]))
        with open(args.rule, "w") as out:
            prefix = f"examples={name} " if args.train else ""
            out.write(f"{prefix}k={k} margin={margin:g} novelty={novelty} "
                      f"max_distance={limit!r} agreement={agreement:g} total={s['total']:+.3f} "
                      f"above={len(s['above'])} larger={s['larger']}\n")
    if args.only and args.write_policy:
        name, k, margin, _, agreement, limit = results[0][0]
        write_policy(args.policy, sets[name], k, margin, limit, agreement, args.write_policy,
                     args.vote, args.inliner_margin)
    if args.picks and args.only:
        with open(args.picks, "w") as out:
            for module, cb, p in zip(data["module"], data["cb"], results[0][2]):
                out.write(f"{cb}\t{module}\t{p}\n")


if __name__ == "__main__":
    main()
