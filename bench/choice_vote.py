"""How a pipeline choice's neighbours vote, shared by bench/choice-loco.py
(every vote, each code base left out) and bench/choice-guard.py (the
vote a written policy uses). 'mean' and 'median' are PipelineChoice's
(policies/PassPipeline.h: CostVote); the others are measured only.
"""
import numpy as np


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
