#!/usr/bin/python3
"""scripts/sweep with real es-train runs on zlib: a 2×2 sweep is interrupted
(SIGTERM) while its second point is half done, resumes without redoing the
finished point, continues the half-done one from its checkpoint (to the same
final policy as an uninterrupted run), runs the rest two at a time, and ends
with the mlgo-results summary sorted by final reward. Also: the committed
sweep files parse, and bad sweeps are refused before anything runs.

    test_sweep.py SWEEP_SCRIPT
    (MLGO_CORPORA_DIR, MLGO_ES_TRAIN, MLGO_RESULTS: set by ctest)
"""

import csv
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import h5py

SWEEP = None
ES_TRAIN = os.environ.get("MLGO_ES_TRAIN", "")
RESULTS = os.environ.get("MLGO_RESULTS", "")
ZLIB = Path(os.environ.get("MLGO_CORPORA_DIR", "corpora")) / "zlib" / "corpus"
REPO = Path(__file__).resolve().parents[2]

TINY = f"""
trainer = "es-train"
args = ["--workers", "2"]
seeds = [3]

[set]
corpus = "{ZLIB}"
steps = 2
directions = 2
modules-per-step = 2
hidden = [4]
vocabulary-quantiles = 20
residual-margin = 0  # random starts: runs that compile (slow enough to interrupt)

[grid]
learning-rate = [0.01, 0.05]
sigma = [0.1, 0.5]
"""
NAMES = [f"learning-rate={lr}_sigma={s}_seed=3" for lr in ("0.01", "0.05")
         for s in ("0.1", "0.5")]


def sweep(*args, **kwargs):
    command = [sys.executable, str(SWEEP), *map(str, args), "--trainer", ES_TRAIN,
               "--results-tool", RESULTS]
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def state(path):
    """(checkpoint step or None, has a final policy), or None if there is no file."""
    if not path.exists():
        return None
    with h5py.File(path, "r") as f:
        step = (int(f["checkpoint"].attrs["step"])
                if len(f["checkpoint/policy_json"]) else None)
        return step, len(f["policies/final/json"]) == 1


def final_policy(path):
    with h5py.File(path, "r") as f:
        return f["policies/final/json"].asstr()[()][0]


class Sweep(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        self.file = self.root / "sweep-tiny.toml"
        self.file.write_text(TINY)
        self.out = self.root / "out"

    def tearDown(self):
        self.dir.cleanup()

    def test_interrupted_sweep_resumes_and_completes(self):
        dry = sweep(self.file, "--output", self.out, "--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        for i, name in enumerate(NAMES, 1):
            self.assertIn(f"[{i}/4] {name}: fresh", dry.stdout)
        self.assertFalse(self.out.exists(), "a dry run writes nothing")

        # Run until the first point has finished and the second has completed
        # one of its two steps, then stop the sweep as a kill would.
        log = open(self.root / "first.log", "w+")
        self.addCleanup(log.close)
        process = subprocess.Popen(
            [sys.executable, str(SWEEP), str(self.file), "--output", str(self.out),
             "--trainer", ES_TRAIN, "--results-tool", RESULTS],
            stdout=log, stderr=subprocess.STDOUT)
        first, second = (self.out / f"{n}.h5" for n in NAMES[:2])
        deadline = time.monotonic() + 240
        while True:
            self.assertIsNone(process.poll(), "the sweep ended before it could be interrupted")
            self.assertLess(time.monotonic(), deadline, "the second point never reached step 1")
            try:
                if state(first) == (2, True) and state(second) == (1, False):
                    break
            except OSError:
                pass  # a file being renamed into place
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(process.wait(timeout=60), 130)
        log.seek(0)
        first_output = log.read()
        self.assertIn("interrupted", first_output)
        self.assertEqual(state(second), (1, False), "the stopped run keeps its last step")
        self.assertIsNone(state(self.out / f"{NAMES[2]}.h5"))
        finished_before = first.stat().st_mtime_ns

        # Resume, two points at a time.
        resumed = sweep(self.file, "--output", self.out, "-j", "2")
        self.assertEqual(resumed.returncode, 0, resumed.stdout + resumed.stderr)
        text = resumed.stdout
        self.assertIn(f"[1/4] {NAMES[0]}: finished earlier, skipped", text)
        self.assertIn(f"[2/4] {NAMES[1]}: started (resuming from step 1/2)", text)
        self.assertIn(f"[3/4] {NAMES[2]}: started (fresh)", text)
        self.assertIn(f"[4/4] {NAMES[3]}: started (fresh)", text)
        self.assertNotIn(f"{NAMES[0]}: started", text)
        self.assertEqual(first.stat().st_mtime_ns, finished_before, "a finished point was redone")
        for name in NAMES:
            self.assertEqual(state(self.out / f"{name}.h5"), (2, True), name)
            self.assertTrue((self.out / f"{name}.toml").exists())
            self.assertTrue((self.out / f"{name}.log").exists())

        # The resumed point ends where an uninterrupted run does.
        again = self.root / "uninterrupted.h5"
        subprocess.run([ES_TRAIN, "--config", str(self.out / f"{NAMES[1]}.toml"), "-o",
                        str(again), "--workers", "2"], check=True, capture_output=True)
        self.assertEqual(final_policy(second), final_policy(again))

        # The summary: every point, sorted by final reward (best first).
        files = [str(self.out / f"{n}.h5") for n in NAMES]
        table = subprocess.run([RESULTS, "summary", *files, "--csv"], check=True,
                               capture_output=True, text=True).stdout
        rows = list(csv.DictReader(io.StringIO(table)))
        rewards = {Path(r["run"]).stem: float(r["final_reward"]) for r in rows}
        expected = sorted(NAMES, key=lambda n: -rewards[n])  # stable: ties in sweep order
        summary = text[text.index("sweep done"):]
        shown = [line.split()[0] for line in summary.splitlines()
                 if line.split() and line.split()[0] in NAMES]
        self.assertEqual(shown, expected, summary)
        header = next(line for line in summary.splitlines() if line.startswith("run"))
        for column in ("learning-rate", "sigma", "seed", "final reward", "final .text vs -Oz"):
            self.assertIn(column, header)

        # Nothing left to do.
        done = sweep(self.file, "--output", self.out)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("4 points (4 finished earlier)", done.stdout)
        self.assertNotIn("started", done.stdout)

        # A sweep file changed since: refused, nothing overwritten.
        self.file.write_text(TINY.replace("steps = 2", "steps = 3"))
        changed = sweep(self.file, "--output", self.out)
        self.assertEqual(changed.returncode, 2)
        self.assertIn(f"{self.out / NAMES[0]}.h5: was run with other settings (steps = '2' in "
                      "the file, 3 in the sweep)", changed.stderr)
        self.assertEqual(first.stat().st_mtime_ns, finished_before)

    def test_bad_sweeps_are_refused_before_running(self):
        cases = {
            "[set]\nno-such-flag = 1\n[grid]\nsigma = [0.1]\n":
                "es-train has no flag --no-such-flag",
            "[grid]\nsigma = []\n": "grid.sigma: expected a non-empty list of values",
            "seeds = [1]\n[grid]\nseed = [1, 2]\n": "seed is varied twice",
            "[random]\nsigma = {gaussian = [0, 1]}\n": "random.sigma: expected one of",
            "trainers = \"es-train\"\n": "unknown key 'trainers'",
            "[grid]\nsigma = [0.1, 0.1]\n": "two points are both named 'sigma=0.1'",
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                self.file.write_text(text)
                result = sweep(self.file, "--output", self.out)
                self.assertEqual(result.returncode, 2, result.stdout)
                self.assertIn(message, result.stderr)
                self.assertFalse(self.out.exists())

    def test_random_draws_name_points_reproducibly(self):
        self.file.write_text(TINY.replace("[grid]", "[random]\nsamples = 3\nseed = 5\n"
                                          "weight-decay = {log-uniform = [1e-5, 1e-2]}\n"
                                          "directions = {choice = [2, 3]}\n[grid]"))
        first = sweep(self.file, "--output", self.out, "--dry-run")
        second = sweep(self.file, "--output", self.out, "--dry-run")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual(first.stdout, second.stdout)
        self.assertIn("12 points", first.stdout)  # 2 × 2 grid × 3 draws × 1 seed
        self.assertRegex(first.stdout, r"learning-rate=0.01_sigma=0.1_weight-decay=[0-9.e-]+_"
                                       r"directions=[23]_seed=3: fresh")

    def test_committed_sweep_files_parse(self):
        files = sorted((REPO / "configs").glob("sweep-*.toml"))
        self.assertTrue(files)
        for file in files:
            with self.subTest(file=file.name):
                result = sweep(file, "--output", self.out, "--dry-run", cwd=self.root)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertRegex(result.stdout, r"\d+ points")


if __name__ == "__main__":
    SWEEP = Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=2)
