#!/usr/bin/env python3
"""A deterministic build graph for the ninja benchmark (docs/run-cost.md).

    graph.py TARGETS DIR

Writes DIR/build.ninja: TARGETS objects compiled from sources in a tree of
directories (each with implicit header dependencies and order-only
dependencies on generated headers), archived into libraries and linked into
one program `app`, with variables, pools and a phony alias; and touches every
source and header so that a dry run plans every edge. The graph depends only
on TARGETS (random.Random(TARGETS).random(), stable across Python versions).
"""
import os
import random
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    targets, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(targets)
    headers = [f"include/h{i}.h" for i in range(max(8, targets // 20))]
    lines = [
        "ninja_required_version = 1.5",
        "cflags = -O2 -Wall",
        "pool link_pool",
        "  depth = 1",
        "rule cc",
        "  command = cc $cflags $extra -c $in -o $out",
        "  description = CC $out",
        "rule gen",
        "  command = gen $out",
        "rule ar",
        "  command = ar rcs $out $in",
        "rule link",
        "  command = cc $in -o $out",
        "  pool = link_pool",
        "build gen/config.h: gen",
    ]
    libraries = {}
    for i in range(targets):
        directory = f"src/d{int(rng.random() * max(1, targets // 50))}"
        source = f"{directory}/f{i}.c"
        deps = sorted({headers[int(rng.random() * len(headers))] for _ in range(1 + int(rng.random() * 6))})
        lines.append(f"build obj/{source}.o: cc {source} | {' '.join(deps)} || gen/config.h")
        if rng.random() < 0.3:
            lines.append(f"  extra = -DUNIT={i}")
        libraries.setdefault(directory, []).append(f"obj/{source}.o")
        os.makedirs(os.path.join(out, directory), exist_ok=True)
        open(os.path.join(out, source), "w").close()
    os.makedirs(os.path.join(out, "include"), exist_ok=True)
    for header in headers:
        open(os.path.join(out, header), "w").close()
    archives = []
    for directory, objects in sorted(libraries.items()):
        archive = f"lib/{directory.replace('/', '_')}.a"
        lines.append(f"build {archive}: ar {' '.join(objects)}")
        archives.append(archive)
    lines.append(f"build bin/app: link {' '.join(archives)}")
    lines.append("build app: phony bin/app")
    lines.append("default app")
    with open(os.path.join(out, "build.ninja"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
