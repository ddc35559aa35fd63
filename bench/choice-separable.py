#!/usr/bin/python3
"""Can module counts tell where a choice's pick makes a module larger?

Usage: bench/choice-separable.py DATA.tsv --columns 0,4,1,5 [--vote mean]
       [--neighbours 20] [--margin 0.01] [--novelty cross:0.95]

Chooses every module as bench/choice-loco.py does (each code base left
out, the others' modules as examples, one configuration), then asks of the
modules that took another alternative than the fallback whether the ones
it made larger can be told from the ones it made smaller, again with each
code base left out: a ridge regression (lambda 10) of "larger" on the
scaled features, the vote's value and the pick. Prints the area under the
ROC curve of that predictor and of the vote's value alone (0.5: no better
than chance). Deterministic; needs numpy.
"""
import argparse

import numpy as np

from choice_vote import cost_vote, load, space


def auc(score, larger):
    """Mann-Whitney: the chance a larger module scores above a smaller one."""
    ranks = np.argsort(np.argsort(score, kind="stable"), kind="stable") + 1
    n1, n0 = larger.sum(), len(larger) - larger.sum()
    return (ranks[larger].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="+")
    parser.add_argument("--columns", required=True)
    parser.add_argument("--vote", default="mean")
    parser.add_argument("--neighbours", type=int, default=20)
    parser.add_argument("--margin", type=float, default=0.01)
    parser.add_argument("--novelty", default="cross:0.95", help="1, or cross:Q")
    args = parser.parse_args()
    columns = [int(c) for c in args.columns.split(",")]
    x, m, cb = load(args.data, columns)
    z, costs, distance = space(x, m)
    bases = list(dict.fromkeys(cb))
    pick, strength = np.zeros(len(z), int), np.zeros(len(z))
    for base in bases:
        held, other = np.where(cb == base)[0], np.where(cb != base)[0]
        limit = np.inf
        if args.novelty.startswith("cross:"):
            block = distance[np.ix_(other, other)]
            across = np.where(cb[other][:, None] == cb[other][None, :], np.inf, block).min(1)
            limit = float(np.quantile(across, float(args.novelty[6:])))
        for i in held:
            d = distance[i, other]
            order = np.argsort(d, kind="stable")
            near = order[:args.neighbours]
            vote = cost_vote(args.vote, d[near], costs[other[near]], cb[other[near]])
            j = int(np.argmin(vote[1:])) + 1
            if vote[j] < -args.margin and d[order[0]] <= limit:
                pick[i], strength[i] = j, vote[j]
    chosen = pick != 0
    larger = (costs[np.arange(len(z)), pick] > 0)[chosen]
    print(f"{chosen.sum()} of {len(z)} modules take another alternative; {larger.sum()} of them "
          f"are larger")
    inputs = np.hstack([z, strength[:, None], np.eye(len(columns))[pick][:, 1:]])[chosen]
    groups = cb[chosen]
    predicted = np.zeros(chosen.sum())
    for base in bases:
        held = groups == base
        if not held.any():
            continue
        a = np.hstack([inputs[~held], np.ones(((~held).sum(), 1))])
        coef = np.linalg.solve(a.T @ a + 10 * np.eye(a.shape[1]), a.T @ larger[~held].astype(float))
        predicted[held] = np.hstack([inputs[held], np.ones((held.sum(), 1))]) @ coef
    print(f"AUC of a ridge regression on the counts, the vote and the pick: "
          f"{auc(predicted, larger):.3f}")
    print(f"AUC of the vote's value alone (a surer vote lower): {auc(strength[chosen], larger):.3f}")


if __name__ == "__main__":
    main()
