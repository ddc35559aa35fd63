"""How a pipeline choice's neighbours vote, and the learning data they vote
from, shared by bench/choice-loco.py (every vote, each code base left
out), bench/choice-separable.py and bench/choice-guard.py (the vote a
written policy uses). 'mean' and 'median' are PipelineChoice's
(policies/PassPipeline.h: CostVote); the others are measured only.
"""
import csv

import numpy as np


def load(paths, columns):
    head, rows = None, []
    for path in paths:
        with open(path) as f:
            table = list(csv.reader(f, delimiter="\t"))
        if head is not None and table[0] != head:
            raise SystemExit(f"{path}: not the same features and pool as {paths[0]}")
        head = table[0]
        rows += table[1:]
    first = head.index("-Oz")
    x = np.array([[float(v) for v in r[2:first]] for r in rows])
    m = np.array([[float(r[first + c]) for c in columns] for r in rows])
    keep = ~np.isnan(m[:, 0])  # as PipelineChoice learns: a failed fallback is left out
    m = np.where(np.isnan(m), m[:, [0]], m)[keep]
    return x[keep], m, np.array([r[1] for r in rows])[keep]


def carries_inliner(pool_names):
    """Per pool column, whether its pipeline runs the inliner policy
    (`pipeline-search` names such a column "…, inliner policy"): the
    alternatives an inliner margin prices."""
    return np.array([name.endswith(", inliner policy") for name in pool_names])


def space(x, m):
    """The examples as the written policy scales them: features scaled by
    their mean and population deviation, each alternative's cost relative to
    the fallback, and every pair's distance (a module's to itself 0)."""
    mean = x.mean(0)
    variance = ((x - mean) ** 2).mean(0)
    z = (x - mean) / np.where(variance > 1e-12, np.sqrt(variance), 1.0)
    costs = (m - m[:, [0]]) / np.maximum(m[:, [0]], 1)
    squares = (z ** 2).sum(1)
    distance = np.sqrt(np.maximum(squares[:, None] + squares[None, :] - 2 * z @ z.T, 0))
    np.fill_diagonal(distance, 0)
    return z, costs, distance


def neighbours(kind, order, d, groups, k):
    """The k voters: the k nearest examples, or with 'one-per-base' the
    nearest example of each code base, the k nearest of those."""
    if kind != "one-per-base":
        return order[:k]
    _, first = np.unique(groups[order], return_index=True)
    return order[np.sort(first)[:k]]


def cost_vote(kind, d, costs, groups):
    """Each alternative's vote (a relative change; lower is better)."""
    w = 1 / (d + 1e-9)
    if kind in ("mean", "one-per-base"):
        return (w[:, None] * costs).sum(0) / w.sum()
    if kind == "median":  # the weighted median: half the weight at or below it
        order = np.argsort(costs, axis=0, kind="stable")
        cumulative = np.cumsum(w[order], axis=0)
        at = (cumulative >= w.sum() / 2).argmax(0)
        return costs[order[at, np.arange(costs.shape[1])], np.arange(costs.shape[1])]
    if kind == "bases":  # each code base among the neighbours one voice
        means = [(w[groups == g, None] * costs[groups == g]).sum(0) / w[groups == g].sum()
                 for g in dict.fromkeys(groups)]
        return np.mean(means, axis=0)
    mean = (w[:, None] * costs).sum(0) / w.sum()  # ucb:L, pessimistic by L deviations
    spread = np.sqrt((w[:, None] * (costs - mean) ** 2).sum(0) / w.sum())
    return mean + float(kind[4:]) * spread
