#!/usr/bin/env python3
"""Compares two mlgo-es run files (or trace files) dataset by dataset, bit for bit, except
what depends on the machine rather than the run: timings and how jobs were
answered (replay, decision-sequence cache, full compiles), and /config's
evaluator flags that say where jobs ran. Exit 0 when equal; otherwise names
every dataset that differs.

Usage: compare-runs.py A.h5 B.h5
"""
import sys

import h5py
import numpy as np

# Machine-dependent datasets (by their last path component).
IGNORED = {
    "elapsed_seconds", "seconds_step", "seconds_evaluate", "seconds_update", "seconds",
    "replays", "replays_verified", "replay_seconds_saved", "full_compiles",
    "cache_hits", "cache_lookups", "cache_seconds_saved",
}
# Evaluator flags that may differ between the runs compared (where and how
# many compile at once); the stored config text differs in them too.
IGNORED_CONFIG_KEYS = {"workers", "output", "overwrite"}


def datasets(group, prefix=""):
    for name, item in group.items():
        path = prefix + "/" + name
        if isinstance(item, h5py.Group):
            yield from datasets(item, path)
        else:
            yield path


def config(f):
    if "/config/keys" not in f:  # a trace file
        return {}
    keys = [k.decode() if isinstance(k, bytes) else k for k in f["/config/keys"][()]]
    values = [v.decode() if isinstance(v, bytes) else v for v in f["/config/values"][()]]
    return {k: v for k, v in zip(keys, values) if k not in IGNORED_CONFIG_KEYS}


def main():
    a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
    problems = []
    paths_a, paths_b = set(datasets(a)), set(datasets(b))
    for path in sorted(paths_a ^ paths_b):
        problems.append(f"{path}: only in one file")
    compared = 0
    for path in sorted(paths_a & paths_b):
        name = path.rsplit("/", 1)[-1]
        if name in IGNORED or name.startswith("seconds") or path.startswith("/config/"):
            continue
        x, y = a[path][()], b[path][()]
        if x.dtype.kind == "f" and y.dtype.kind == "f":
            same = x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
        else:
            same = x.shape == y.shape and np.array_equal(x, y)
        compared += 1
        if not same:
            problems.append(f"{path}: differs")
    if config(a) != config(b):
        problems.append("/config: the runs' settings differ")
    for p in problems:
        print(p)
    print(f"compare-runs: {compared} datasets compared, {len(problems)} differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
