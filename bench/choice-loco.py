#!/usr/bin/python3
"""The pipeline choice's configuration chosen by leaving code bases out.

Usage: bench/choice-loco.py DATA.tsv [DATA.tsv…] --columns 0,4,1,5 [--votes mean,…]
       [--inliner-margins 0,…] [--score-without NAME,…] [--rule FILE]

Each DATA.tsv is `mlgo-eval pipeline-search … --program-search choice
--choice-data` learning data (a row per module: its code base, features,
measure under every pool pipeline); together they are the examples.
--columns names the pool column of each of the choice's alternatives, the
fallback first. For every candidate (k, margin, novelty) of the grid, each
code base is left out in turn and its modules chosen as PipelineChoice
chooses (bench/choice-guard.py: the cost vote of the k nearest examples,
weights 1 / (distance + 1e-9), the fallback unless another alternative is
cheaper by more than the margin, the fallback for a module whose nearest
example is past the novelty threshold) from the examples of every other
code base. Features are scaled as the policy written from all of them
scales them; the novelty threshold is computed from the other code bases'
examples in each fold ('1' off, 'Q' the Q-quantile of their distances to
their nearest other example, 'cross:Q' to the nearest example of another
code base). Prints per candidate the total over every module against the
fallback, the modules larger, and the code bases above the fallback; with
--rule, the winner (the fewest code bases above, then the smallest total)
in choice-guard.py's rule format. Deterministic; needs numpy.

--inliner-margins (each a candidate dimension; default 0): an alternative
whose pool pipeline carries the inliner policy (its column named
"…, inliner policy") votes that much worse, so it must undercut the
fallback by the margin plus this; 'inf' never picks one (a choice among
the pipelines with LLVM's inliner only). --score-without: code bases still
left out in turn and still examples for the others, but not counted in
the score (the totals and the code bases above): those an inliner policy
trained on, where its alternatives' costs are its own training code's.

VOTES (--votes, each a candidate dimension; default mean):
  mean          the neighbours' weighted mean cost (PipelineChoice's vote);
  median        their weighted median;
  ucb:L         the mean plus L weighted standard deviations (pessimistic);
  bases         each code base among the neighbours one voice (its
                neighbours' weighted mean), the voices averaged;
  one-per-base  the nearest example of each other code base, the k nearest
                of those as the voters, averaged as the mean.
"""
import argparse
import itertools

import numpy as np

from choice_vote import carries_inliner, cost_vote, load, neighbours, space


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="+")
    parser.add_argument("--columns", required=True)
    parser.add_argument("--neighbours", default="10,20,40")
    parser.add_argument("--margins", default="0,0.005,0.01,0.02")
    parser.add_argument("--novelty", default="1,0.8,cross:0.5,cross:0.8,cross:0.95")
    parser.add_argument("--votes", default="mean",
                        help="how the neighbours' costs vote (comma-separated; see VOTES)")
    parser.add_argument("--inliner-margins", default="0",
                        help="extra margins for alternatives with the inliner policy ('inf': never)")
    parser.add_argument("--score-without", default="",
                        help="code bases left out of the score (comma-separated)")
    parser.add_argument("--rule", help="write the winner here")
    args = parser.parse_args()
    columns = [int(c) for c in args.columns.split(",")]
    x, m, cb = load(args.data, columns)
    with open(args.data[0]) as f:
        head = f.readline().rstrip("\n").split("\t")
    pool = head[head.index("-Oz"):]
    carries = carries_inliner([pool[c] for c in columns])
    z, costs, distance = space(x, m)
    bases = list(dict.fromkeys(cb))
    ks = [int(v) for v in args.neighbours.split(",")]
    margins = [float(v) for v in args.margins.split(",")]
    novelties = args.novelty.split(",")
    votes = args.votes.split(",")
    extras = [float(v) for v in args.inliner_margins.split(",")]
    unscored = set(filter(None, args.score_without.split(",")))
    if unscored - set(bases):
        raise SystemExit(f"--score-without: no such code base: {', '.join(sorted(unscored - set(bases)))}")
    scored = [b for b in bases if b not in unscored]
    in_score = np.isin(cb, scored)
    for kind in votes:
        if kind not in ("mean", "median", "bases", "one-per-base") and not kind.startswith("ucb:"):
            raise SystemExit(f"--votes: unknown vote '{kind}'")
    print(f"{len(z)} modules of {len(bases)} code bases; alternatives {args.columns} "
          f"(with the inliner policy: {','.join(str(c) for c, w in zip(columns, carries) if w) or 'none'}); "
          f"scored: {len(scored)} code bases, {int(in_score.sum())} modules")
    # Per fold: the held-out modules' k nearest examples of the other code
    # bases (stable order, as PipelineChoice), and the novelty thresholds.
    candidates = list(itertools.product(votes, ks, margins, novelties, extras))
    picks = {c: np.zeros(len(z), dtype=int) for c in candidates}
    for base in bases:
        held = np.where(cb == base)[0]
        other = np.where(cb != base)[0]
        block = distance[np.ix_(other, other)]
        within = np.where(np.eye(len(other), dtype=bool), np.inf, block).min(1)
        across = np.where(cb[other][:, None] == cb[other][None, :], np.inf, block).min(1)
        limits = {}
        for spec in novelties:
            if spec == "1":
                limits[spec] = np.inf
            elif spec.startswith("cross:"):
                limits[spec] = float(np.quantile(across, float(spec[6:])))
            else:
                limits[spec] = float(np.quantile(within, float(spec)))
        for i in held:
            d = distance[i, other]
            order = np.argsort(d, kind="stable")
            for kind in votes:
                for k in ks:
                    near = neighbours(kind, order, d, cb[other], k)
                    raw = cost_vote(kind, d[near], costs[other[near]], cb[other[near]])
                    for extra in extras:
                        vote = np.where(carries, raw + extra, raw)  # inf: never an inliner alternative
                        j = int(np.argmin(vote[1:])) + 1
                        for margin in margins:
                            for spec in novelties:
                                ok = vote[j] < -margin and d[order[0]] <= limits[spec]
                                picks[(kind, k, margin, spec, extra)][i] = j if ok else 0
    results = []
    print("| vote | k | margin | novelty | inliner margin | total | larger | code bases above | worst "
          "| unscored above |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | --- |")
    for (kind, k, margin, spec, extra), p in picks.items():
        got = m[np.arange(len(p)), p]
        fallback = m[:, 0]
        per = {b: 100 * (got[cb == b].sum() / fallback[cb == b].sum() - 1) for b in bases}
        above = [b for b in scored if per[b] > 0]
        total = 100 * (got[in_score].sum() / fallback[in_score].sum() - 1)
        results.append(((kind, k, margin, spec, extra), total, above))
        print(f"| {kind} | {k} | {margin:g} | {spec} | {extra:g} | {total:+.3f} % | "
              f"{int((got > fallback)[in_score].sum())} | "
              f"{', '.join(f'{b} {per[b]:+.3f}' for b in above) or 'none'} | "
              f"{max(per[b] for b in scored):+.3f} % | "
              f"{', '.join(b for b in bases if b in unscored and per[b] > 0) or '-'} |", flush=True)
    if args.rule:
        (kind, k, margin, spec, extra), total, above = min(results, key=lambda r: (len(r[2]), r[1]))
        with open(args.rule, "w") as out:
            out.write(f"examples=all k={k} margin={margin:g} novelty={spec} max_distance=- "
                      f"agreement=0 total={total:+.3f} above={len(above)} vote={kind} "
                      f"inliner_margin={extra:g}\n")


if __name__ == "__main__":
    main()
