#!/usr/bin/python3
"""Plot mlgo-es run files (es-train, ppo-train, bc-train) to PNG.

    scripts/plot_runs.py RUN.h5 [RUN.h5 ...] -o DIR

writes, with every run on the same figure:

  DIR/learning-curves.png      mean (solid) and best (dashed) candidate reward,
                               and .text vs -Oz, over steps and over wall time
  DIR/reward-distribution.png  each step's candidate rewards (boxes; quantile
                               bands when there are many steps), one panel per run
  DIR/module-wins.png          per module, bytes of the final policy vs -Oz
                               (below zero: smaller than -Oz, a win)

It reads the schema in results/README.md ("Run files") with h5py only. Runs by
Debian's /usr/bin/python3, which has python3-h5py and python3-matplotlib (a
pyenv or venv python3 earlier on PATH usually has neither).

Sizes vs -Oz: over steps, the training candidates' total size against the
total -Oz size of the step's modules (their successful compiles); where the
run has a validation corpus, its validation points too. Module wins: the last
validation of the final policy if there is one, else, per module, the mean
size of the candidates of the latest step that compiled it (approximate; for
exact sizes use `mlgo-results compare --evaluate CORPUS`).
"""

import argparse
import os
import sys
from pathlib import Path

import h5py
import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator, ScalarFormatter  # noqa: E402

STEP_TABLES = ("candidate_rewards", "modules", "sizes")
MAX_MODULES = 40  # module-wins shows the modules with the largest differences
MAX_BOXES = 60  # above this many steps, quantile bands replace box plots


class Run:
    """What the plots need from one run file."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            raise SystemExit(f"plot_runs.py: error: {path}: cannot open as HDF5 ({e})")
        with f:
            if f.attrs.get("format") != "mlgo-run":
                raise SystemExit(f"plot_runs.py: error: {path}: not an mlgo run file")
            version = int(f.attrs.get("version", 0))
            if version > 1:
                raise SystemExit(
                    f"plot_runs.py: error: {path}: was written by a newer mlgo-es "
                    f"(run format version {version}; this script reads 1)"
                )
            self.trainer = f.attrs.get("trainer", "?")
            steps = f["steps"]
            self.rewards = steps["candidate_rewards"][()]  # [S, K]
            self.scalars = {
                name: steps[name][()] for name in steps if name not in STEP_TABLES
            }
            self.step_modules = steps["modules"][()]  # [S, M] or [0, 0]
            self.sizes = steps["sizes"][()]  # [S, K*M] or [0, 0]
            self.module_names = list(f["modules/name"].asstr()[()])
            self.baselines = f["modules/baseline_size"][()]
            self.validation_names = list(f["validation_modules/name"].asstr()[()])
            self.validation_baselines = f["validation_modules/baseline_size"][()]
            self.validation_steps = f["validation/step"][()]
            self.validation_sizes = f["validation/sizes"][()]
            self.validation_ok = f["validation/ok"][()]
            self.validation_total = f["validation/total_reward"][()]
            final = f["policies/final"]
            self.final_step = int(final.attrs["step"]) if len(final["json"]) else None
            keys = f["config/keys"].asstr()[()]
            values = f["config/values"].asstr()[()]
            self.config = dict(zip(keys, values))
        self.label = self.path.stem

    @property
    def steps(self):
        return self.rewards.shape[0]

    def scalar(self, name):
        values = self.scalars.get(name)
        return values if values is not None else np.full(self.steps, np.nan)

    def wall_seconds(self):
        if "elapsed_seconds" in self.scalars:
            return self.scalars["elapsed_seconds"]
        if "seconds_step" in self.scalars:
            return np.nancumsum(self.scalars["seconds_step"])
        return None

    def has_sizes(self):
        return self.sizes.shape[0] > 0 and self.step_modules.shape[0] > 0

    def size_change_per_step(self):
        """Σ candidate sizes / Σ -Oz sizes − 1 over the step's successful compiles."""
        if not self.has_sizes():
            return None
        S, M = self.step_modules.shape
        K = self.sizes.shape[1] // M
        sizes = self.sizes.reshape(S, K, M).astype(float)
        base = self.baselines[self.step_modules].astype(float)  # [S, M]
        base = np.broadcast_to(base[:, None, :], sizes.shape)
        used = (sizes > 0) & (base > 0)
        total = np.where(used, sizes, 0).sum(axis=(1, 2))
        total_base = np.where(used, base, 0).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total_base > 0, total / total_base - 1, np.nan)

    def final_module_deltas(self):
        """(module names, bytes vs -Oz, source) of the final policy."""
        if self.final_step is not None and len(self.validation_steps):
            rows = np.nonzero(self.validation_steps == self.final_step)[0]
            if len(rows):
                v = rows[-1]
                ok = (self.validation_ok[v] == 1) & (self.validation_baselines > 0)
                deltas = np.where(
                    ok,
                    self.validation_sizes[v].astype(float) - self.validation_baselines,
                    np.nan,
                )
                return self.validation_names, deltas, "validation of the final policy"
        if not self.has_sizes():
            return [], np.array([]), "no sizes"
        S, M = self.step_modules.shape
        K = self.sizes.shape[1] // M
        sizes = self.sizes.reshape(S, K, M).astype(float)
        deltas = {}
        for s in range(S - 1, -1, -1):
            for m in range(M):
                module = int(self.step_modules[s, m])
                if module in deltas or self.baselines[module] == 0:
                    continue
                ok = sizes[s, :, m] > 0
                if ok.any():
                    deltas[module] = sizes[s, ok, m].mean() - self.baselines[module]
        order = sorted(deltas)
        return (
            [self.module_names[i] for i in order],
            np.array([deltas[i] for i in order]),
            "training candidates, latest step (approx.)",
        )


def plot_learning_curves(runs, out):
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, run in enumerate(runs):
        color = colors[i % len(colors)]
        steps = np.arange(run.steps)
        seconds = run.wall_seconds()
        change = run.size_change_per_step()
        for col, x in ((0, steps), (1, seconds)):
            if x is None:
                continue
            ax = axes[0][col]
            ax.plot(x, run.scalar("reward_mean"), color=color, label=f"{run.label} mean")
            ax.plot(x, run.scalar("reward_max"), color=color, linestyle="--", alpha=0.7,
                    label=f"{run.label} best")
            ax = axes[1][col]
            if change is not None:
                ax.plot(x, 100 * change, color=color, label=f"{run.label} candidates")
            if len(run.validation_steps):
                # Validation after v steps compiles the point the population of
                # step v is drawn around: at v on the step axis; on the time
                # axis, at the end of step v - 1, when it ran.
                idx = np.clip(run.validation_steps - 1, 0, run.steps - 1)
                vx = run.validation_steps if col == 0 else x[idx]
                ax.plot(vx, -100 * run.validation_total, color=color, marker="o",
                        linestyle=":", label=f"{run.label} validation")
    axes[0][0].set_ylabel("reward (1 − size / -Oz size)")
    axes[1][0].set_ylabel(".text vs -Oz (%)")
    for row in range(2):
        axes[row][0].set_xlabel("step")
        axes[row][0].xaxis.set_major_locator(MaxNLocator(integer=True))
        axes[row][1].set_xlabel("wall time (s)")
        for col in range(2):
            ax = axes[row][col]
            ax.grid(alpha=0.3)
            if row == 1:
                ax.axhline(0, color="black", linewidth=0.8)
    axes[0][0].set_title("reward over steps")
    axes[0][1].set_title("reward over wall time")
    axes[1][0].set_title("code size vs -Oz over steps")
    axes[1][1].set_title("code size vs -Oz over wall time")
    for ax in (axes[0][0], axes[1][0]):
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def plot_reward_distribution(runs, out):
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 2.8 * len(runs) + 0.6), squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        if run.steps == 0:
            ax.set_title(f"{run.label}: no steps yet")
            continue
        data = [row[np.isfinite(row)] for row in run.rewards]
        steps = np.arange(run.steps)
        if run.steps <= MAX_BOXES:
            ax.boxplot([d if len(d) else [np.nan] for d in data], positions=steps, widths=0.6,
                       showfliers=True, flierprops={"markersize": 3})
            ax.xaxis.set_major_formatter(ScalarFormatter())  # boxplot fixed its own labels
        else:
            q = np.array([np.percentile(d, [10, 25, 50, 75, 90]) if len(d) else [np.nan] * 5
                          for d in data])
            ax.fill_between(steps, q[:, 0], q[:, 4], alpha=0.2, label="p10–p90")
            ax.fill_between(steps, q[:, 1], q[:, 3], alpha=0.4, label="p25–p75")
            ax.plot(steps, q[:, 2], label="median")
            ax.legend(fontsize="small")
        ax.plot(steps, run.scalar("reward_mean"), color="tab:red", linewidth=1, label="mean")
        ax.set_title(f"{run.label}: candidate rewards per step")
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("reward")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def plot_module_wins(runs, out):
    per_run = [run.final_module_deltas() for run in runs]
    modules = []
    for names, _, _ in per_run:
        for name in names:
            if name not in modules:
                modules.append(name)
    table = np.full((len(runs), len(modules)), np.nan)
    for r, (names, deltas, _) in enumerate(per_run):
        for name, delta in zip(names, deltas):
            table[r, modules.index(name)] = delta
    title = "bytes vs -Oz per module"
    if len(modules) > MAX_MODULES:
        keep = np.argsort(-np.nansum(np.abs(table), axis=0))[:MAX_MODULES]
        keep = np.sort(keep)
        modules = [modules[i] for i in keep]
        table = table[:, keep]
        title += f"; the {MAX_MODULES} modules with the largest differences"
    height = max(3.0, 0.28 * len(modules) * max(1, len(runs)) ** 0.5 + 1.5)
    fig, ax = plt.subplots(figsize=(10, height))
    y = np.arange(len(modules))
    width = 0.8 / max(1, len(runs))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for r, run in enumerate(runs):
        values = np.nan_to_num(table[r], nan=0.0)
        offset = (r - (len(runs) - 1) / 2) * width
        ax.barh(y + offset, values, height=width, color=colors[r % len(colors)],
                label=f"{run.label} ({per_run[r][2]})")
    ax.set_yticks(y)
    ax.set_yticklabels(modules, fontsize="small")
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("final policy size − -Oz size (bytes):  "
                  "← smaller (wins)  |  larger (losses) →")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot mlgo-es run files (learning curves, reward distributions, "
        "per-module wins and losses) to PNG; several runs share each figure.")
    parser.add_argument("runs", nargs="+", help="run files (.h5)")
    parser.add_argument("-o", "--output", default="plots",
                        help="directory for the PNG files (default: %(default)s)")
    parser.add_argument("--prefix", default="",
                        help="prefix of the file names, e.g. 'sweep-' (default: none)")
    args = parser.parse_args(argv)

    runs = [Run(path) for path in args.runs]
    labels = [run.label for run in runs]
    if len(set(labels)) < len(labels):
        for run in runs:
            run.label = str(run.path)
    os.makedirs(args.output, exist_ok=True)
    out = Path(args.output)
    written = []
    for name, plot in (("learning-curves", plot_learning_curves),
                       ("reward-distribution", plot_reward_distribution),
                       ("module-wins", plot_module_wins)):
        path = out / f"{args.prefix}{name}.png"
        plot(runs, path)
        written.append(path)
        print(path, file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
