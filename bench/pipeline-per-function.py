#!/usr/bin/python3
"""How much a per-function pipeline decision could add to a per-module one.

bench/pipeline-per-function.py [-j N] [--alternative I] OUT CODEBASE...

Each module of each code base (build/corpora/NAME/corpus) is compiled twice
through clang-22 and the pass plugin, as a build compiles it: with -Oz and
with alternative I (default 2: the wide-greedy pipeline, heuristic inliner)
of the shipped choice (configs/policies/pipeline-inlining-oz-v5.json). The
defined functions' sizes (symbol sizes in .text) of the two objects give,
per code base, in .text bytes:
  oz          -Oz's total;
  alt         the alternative everywhere;
  module      the better of the two per module (a per-module oracle);
  function    a per-function oracle, estimated: the better of -Oz's object
              with the alternative's size for each function both define
              where it is smaller, and the alternative's object with -Oz's
              where that is smaller (functions interact through inlining
              and merging, which the estimate ignores; functions only one
              object defines stay as they are in it).
No policy is judged: this is the headroom of a finer decision, and it reads
only the code bases named (validation, not test). Writes OUT/NAME.tsv (per
module: oz, alt, function-oracle bytes), OUT/NAME.functions.tsv (per
function both objects define: module, function, -Oz's and the
alternative's bytes) and prints a Markdown table.
"""
import argparse
import concurrent.futures as futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import policy_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("MLGO_BUILD_DIR", ROOT / "build"))
CLANG = "/usr/lib/llvm-22/bin/clang"
PLUGIN = BUILD / "inprocess" / "libmlgo-inliner.so"


def command(module_cmd: pathlib.Path, bitcode: pathlib.Path, obj: pathlib.Path, plugin: bool):
    args = [a for a in module_cmd.read_bytes().decode().split("\0") if a]
    if len(args) == 1:  # a .cmd may be space separated
        args = args[0].split()
    args = [a for a in args if not a.startswith("-fembed-bitcode")]
    load = ["-fpass-plugin=" + str(PLUGIN)] if plugin else []  # -Oz: clang alone
    return [CLANG] + args + load + ["-x", "ir", str(bitcode), "-o", str(obj)]


def text_functions(obj: pathlib.Path):
    """(total .text bytes, {function: size}) of an object."""
    sections = subprocess.run(["llvm-readelf-22", "-S", "-W", str(obj)], capture_output=True,
                              text=True, check=True).stdout
    total, text_index = 0, set()
    for line in sections.splitlines():
        line = line.replace("[ ", "[")
        parts = line.split()
        if len(parts) > 6 and parts[0].startswith("[") and parts[1].startswith(".text"):
            total += int(parts[5], 16)
            text_index.add(parts[0].strip("[]"))
    symbols = subprocess.run(["llvm-readelf-22", "-s", "-W", str(obj)], capture_output=True,
                             text=True, check=True).stdout
    functions = {}
    for line in symbols.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC" and parts[6] in text_index:
            functions[parts[7]] = functions.get(parts[7], 0) + int(parts[2])
    return total, functions


def compile_one(job):
    name, cmd, bitcode, policies, scratch = job
    sizes = []
    for index, policy in enumerate(policies):
        obj = pathlib.Path(scratch) / f"{abs(hash(name))}.{index}.o"
        env = dict(os.environ)
        env.pop("MLGO_PIPELINE_POLICY", None)
        if policy:
            env["MLGO_PIPELINE_POLICY"] = str(policy)
        result = subprocess.run(command(cmd, bitcode, obj, policy is not None), env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{name}: {result.stderr[-400:]}")
        sizes.append(text_functions(obj))
        obj.unlink()
    (oz, oz_functions), (alt, alt_functions) = sizes
    # From either object, take the other's size for every function both
    # define where it is smaller; functions only one object defines (merged,
    # inlined away) stay as they are in it.
    common = oz_functions.keys() & alt_functions.keys()
    from_oz = oz + sum(min(0, alt_functions[f] - oz_functions[f]) for f in common)
    from_alt = alt + sum(min(0, oz_functions[f] - alt_functions[f]) for f in common)
    both = "".join(f"{name}\t{f}\t{oz_functions[f]}\t{alt_functions[f]}\n" for f in sorted(common))
    return name, oz, alt, min(from_oz, from_alt), both


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("codebases", nargs="+")
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--alternative", type=int, default=2)
    parser.add_argument("--policy", default=str(ROOT / "configs/policies/pipeline-inlining-oz-v5.json"))
    options = parser.parse_args()
    out = pathlib.Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    choice = policy_file.load(options.policy)["choice"]
    pipeline = choice["pipelines"][options.alternative]
    if options.alternative not in choice.get("heuristic_inliner", []):
        sys.exit(f"alternative {options.alternative} uses the inliner policy; pick a heuristic-inliner one")
    alt_policy = out / "alternative.json"
    alt_policy.write_text(json.dumps({"format": "mlgo-es-policy", "version": 3, "kind": "pipeline",
                                      "inputs": [], "pipeline": pipeline}))
    rows = []
    print("| code base | modules | -Oz | alternative | per-module best | per-function best (est.) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    grand = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        for codebase in options.codebases:
            tsv = out / f"{codebase}.tsv"
            if not tsv.exists():
                corpus = BUILD / "corpora" / codebase / "corpus"
                modules = json.load(open(corpus / "corpus_description.json"))["modules"]
                jobs = [(m, corpus / (m + ".cmd"), corpus / (m + ".bc"), [None, alt_policy], scratch)
                        for m in modules]
                with futures.ThreadPoolExecutor(options.j) as pool:
                    rows = list(pool.map(compile_one, jobs))
                tsv.write_text("".join(f"{n}\t{a}\t{b}\t{c}\n" for n, a, b, c, _ in rows))
                (out / f"{codebase}.functions.tsv").write_text("".join(r[4] for r in rows))
            rows = [line.split("\t") for line in tsv.read_text().splitlines()]
            oz = sum(int(r[1]) for r in rows)
            alt = sum(int(r[2]) for r in rows)
            best = sum(min(int(r[1]), int(r[2])) for r in rows)
            per_function = sum(int(r[3]) for r in rows)
            for i, v in enumerate((oz, alt, best, per_function)):
                grand[i] += v
            pct = lambda v, base=oz: f"{100.0 * (v - base) / base:+.3f} %"
            print(f"| {codebase} | {len(rows)} | {oz} | {pct(alt)} | {pct(best)} | {pct(per_function)} |",
                  flush=True)
    pct = lambda v: f"{100.0 * (v - grand[0]) / grand[0]:+.3f} %"
    print(f"| **total** | | {grand[0]} | {pct(grand[1])} | {pct(grand[2])} | {pct(grand[3])} |")


if __name__ == "__main__":
    main()
