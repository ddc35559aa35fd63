#!/usr/bin/python3
"""scripts/plot_runs.py on the analysis.runs fixture (two tiny real es-train
runs on zlib): every figure is written, is a real PNG of sensible size and is
not blank, for several runs on one figure and for one run; a file that is not
a run file is an error naming it.

    test_plot_runs.py PLOT_SCRIPT      (MLGO_ANALYSIS_RUNS: the fixture's runs)
"""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import matplotlib.image
import numpy as np

SCRIPT = None
RUNS = Path(os.environ.get("MLGO_ANALYSIS_RUNS", "runs"))
FIGURES = ("learning-curves.png", "reward-distribution.png", "module-wins.png")


def plot(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True)


class PlotRuns(unittest.TestCase):
    def check_figures(self, directory, prefix=""):
        for name in FIGURES:
            path = Path(directory) / f"{prefix}{name}"
            self.assertTrue(path.exists(), path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", path)
            self.assertGreater(path.stat().st_size, 10_000, path)
            self.assertLess(path.stat().st_size, 1_000_000, path)
            image = matplotlib.image.imread(path)
            self.assertGreaterEqual(image.shape[0], 200, path)
            self.assertGreaterEqual(image.shape[1], 400, path)
            rgb = image[..., :3]
            # Not blank: lines and text in several colours over the background.
            self.assertGreater(float(rgb.std()), 0.02, path)
            background = (rgb > 0.98).all(axis=-1).mean()
            self.assertLess(background, 0.995, path)
            colours = np.unique((rgb * 255).astype(np.uint8).reshape(-1, 3), axis=0)
            self.assertGreater(len(colours), 20, path)

    def test_several_runs_on_one_figure(self):
        with tempfile.TemporaryDirectory() as out:
            result = plot(RUNS / "a.h5", RUNS / "b.h5", "-o", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.check_figures(out)
            self.assertEqual(result.stdout.split(), [str(Path(out) / n) for n in FIGURES])

    def test_one_run_with_a_prefix(self):
        with tempfile.TemporaryDirectory() as out:
            result = plot(RUNS / "b.h5", "-o", Path(out) / "figs", "--prefix", "b-")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.check_figures(Path(out) / "figs", "b-")

    def test_not_a_run_file_is_an_error_naming_it(self):
        with tempfile.TemporaryDirectory() as out:
            text = Path(out) / "notes.txt"
            text.write_text("not a run\n")
            result = plot(RUNS / "a.h5", text, "-o", out)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(f"{text}: cannot open as HDF5", result.stderr)
            self.assertFalse((Path(out) / FIGURES[0]).exists())


if __name__ == "__main__":
    SCRIPT = Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=2)
