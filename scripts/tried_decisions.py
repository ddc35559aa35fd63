#!/usr/bin/python3
"""What the decisions a search tried say: where a flip away from -Oz helps.

    scripts/tried_decisions.py TRIED.h5 [--feature cost_estimate]

TRIED.h5 is `mlgo-eval search ... --tried TRIED.h5`: one trace row per
decision tried, its size with the flip against the size before. Prints, per
code base (the module name's first component) and per band of one feature
(the inliner's cost_estimate by default), for each of the compiler's
decisions: how many flips were tried, how many helped, the mean bytes saved
when one helped and cost when one hurt, and the bytes if every flip in the
band were taken. A band where that last number is negative is one where a
simple rule would beat -Oz; none has been on the project's corpora
(docs/inlining-results.md, section 5).
"""

import argparse
import sys

import h5py
import numpy as np


def load(path):
    with h5py.File(path, "r") as f:
        if f.attrs.get("format") not in ("mlgo-trace", b"mlgo-trace"):
            sys.exit(f"{path}: not an mlgo trace")
        modules = f["decisions/module"][:]
        status = f["modules/status"].asstr()[:][modules]
        ok = (status == "ok") & f["modules/has_baseline"][:][modules].astype(bool)
        delta = f["modules/size"][:].astype(np.int64) - f["modules/baseline_size"][:].astype(np.int64)
        names = f["modules/name"].asstr()[:]
        features = list(f["features/name"].asstr()[:])
        columns = f["features/column"][:]
        return {
            "observations": f["decisions/observations"][:][ok],
            "default": f["decisions/default_decision"][:][ok],
            "delta": delta[modules][ok],
            "code_base": np.array([names[m].split("/")[0] for m in modules[ok]]),
            "column": dict(zip(features, columns)),
        }


def row(label, delta):
    helped, hurt = delta[delta < 0], delta[delta > 0]
    saved = f"{-helped.mean():.0f}" if helped.size else "-"
    cost = f"{hurt.mean():.0f}" if hurt.size else "-"
    share = 100 * helped.size / delta.size if delta.size else 0
    print(f"| {label} | {delta.size} | {share:.1f} % | {saved} | {cost} | {delta.sum():+d} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--feature", default="cost_estimate", help="feature whose bands are listed")
    parser.add_argument("--bands", type=int, default=5, help="quantile bands per decision")
    args = parser.parse_args()
    data = load(args.trace)
    if args.feature not in data["column"]:
        sys.exit(f"{args.trace}: no feature {args.feature}")
    header = "| tried | flip helped | bytes saved when it helped | bytes cost when it hurt | bytes if all flipped |"
    print("| code base " + header + "\n| --- | ---: | ---: | ---: | ---: | ---: |")
    for base in sorted(set(data["code_base"])):
        row(base, data["delta"][data["code_base"] == base])
    row("**all**", data["delta"])
    value = data["observations"][:, data["column"][args.feature]]
    print(f"\n| compiler's decision, {args.feature} " + header + "\n| --- | ---: | ---: | ---: | ---: | ---: |")
    for decision in (0, 1):
        chosen = data["default"] == decision
        if not chosen.any():
            continue
        edges = np.unique(np.quantile(value[chosen], np.linspace(0, 1, args.bands + 1)))
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
            last = i == len(edges) - 2
            band = chosen & (value >= lo) & ((value <= hi) if last else (value < hi))
            row(f"{decision}, [{lo:g}, {hi:g}{']' if last else ')'}", data["delta"][band])


if __name__ == "__main__":
    main()
