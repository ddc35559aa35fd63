#!/usr/bin/python3
"""Does LLVM's RegAllocScore predict run cost? (docs/regalloc-results.md)

    run-cost-relation.py OUT.png NAME=SCORE.md,RUNCOST.md[,RUNCOST.md…] …

Each NAME is a policy; SCORE.md its `mlgo-eval report --task
regalloc-eviction` table over the programs' -O2 code bases (rows "NAME-O2"),
RUNCOST.md its `mlgo-eval run-cost` tables. Every (policy, program) pair with
both figures is a point: the change of the code base's total RegAllocScore
against -O2 and the change of the program's run cost against the plain -O2
build, both in percent. Prints the pairs, Spearman's rank correlation and the
share of pairs whose signs agree, and draws the scatter plot.
"""
import re
import sys


def table_rows(path):
    """The cells of every Markdown table row of a file."""
    rows = []
    for line in open(path):
        if line.startswith("|") and not line.startswith("| ---"):
            rows.append([cell.strip().strip("*") for cell in line.strip().strip("|").split("|")])
    return rows


def percent(cell):
    match = re.match(r"^([+-]?\d+(?:\.\d+)?) %$", cell)
    return float(match.group(1)) if match else None


def scores(path):
    """code base → score change in percent ("vs -O2", the sixth column)."""
    result = {}
    for cells in table_rows(path):
        if len(cells) >= 6 and cells[0].endswith("-O2") and percent(cells[5]) is not None:
            result[cells[0][:-3]] = percent(cells[5])
    return result


def run_costs(paths):
    """program → run-cost change in percent ("vs plain", the fourth column)."""
    result = {}
    for path in paths:
        for cells in table_rows(path):
            if len(cells) >= 4 and cells[0] not in ("program", "total") and percent(cells[3]) is not None:
                result[cells[0]] = percent(cells[3])
    return result


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return result


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else float("nan")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    points = []  # (policy, program, score change, run-cost change)
    for spec in sys.argv[2:]:
        name, files = spec.split("=", 1)
        files = files.split(",")
        score, cost = scores(files[0]), run_costs(files[1:])
        for program in sorted(set(score) & set(cost)):
            points.append((name, program, score[program], cost[program]))
    if len(points) < 3:
        sys.exit("fewer than three (policy, program) pairs with both figures")
    print("| policy | program | RegAllocScore vs -O2 | run cost vs -O2 |")
    print("| --- | --- | ---: | ---: |")
    for name, program, s, c in points:
        print(f"| {name} | {program} | {s:+.3f} % | {c:+.3f} % |")
    xs, ys = [p[2] for p in points], [p[3] for p in points]
    rho = spearman(xs, ys)
    agree = sum(1 for x, y in zip(xs, ys) if (x > 0) == (y > 0) and x != 0 and y != 0)
    signed = sum(1 for x, y in zip(xs, ys) if x != 0 and y != 0)
    print(f"\n{len(points)} pairs; Spearman's rank correlation {rho:+.3f}; "
          f"signs agree on {agree} of {signed} pairs with both changes non-zero")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for name in dict.fromkeys(p[0] for p in points):
        mine = [p for p in points if p[0] == name]
        ax.scatter([p[2] for p in mine], [p[3] for p in mine], label=name)
        for p in mine:
            ax.annotate(p[1], (p[2], p[3]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.axvline(0, color="grey", linewidth=0.5)
    ax.set_xlabel("RegAllocScore vs -O2 (%; lower is better)")
    ax.set_ylabel("run cost vs -O2 (%; cachegrind cycle estimate)")
    ax.set_title(f"Eviction policies: score against run cost (Spearman {rho:+.2f})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=120)
    print(f"plot: {sys.argv[1]}")


if __name__ == "__main__":
    main()
