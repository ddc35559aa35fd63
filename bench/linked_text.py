#!/usr/bin/python3
"""What a linker keeps of a build's objects' code: per-object .text against
the same with every COMDAT group counted once.

Usage: bench/linked_text.py DIR [DIR…]

For each DIR, every object file (*.o) under it (CMake's own probe objects
left out) is read with readelf: its executable PROGBITS sections are its
code, the per-object sum is what mlgo-eval's text-size measure adds up.
A section in a COMDAT group (a C++ inline function or template instance,
emitted in every object that uses it) is kept once per group and section
name across the objects, as a linker keeps the first copy and discards the
rest: the estimate of the linked program's code. The two differ by the
copies a linker discards, so a change that removes such a copy from one
object (folding it, inlining it away) shrinks the first figure and not
the second. Prints a line per DIR; deterministic; needs binutils' readelf.
"""
import pathlib
import re
import subprocess
import sys

SECTION = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\S*)", re.M)
GROUP = re.compile(r"COMDAT group section \[\s*\d+\] `[^']*' \[([^\]]+)\] contains \d+ sections:\n"
                   r"\s*\[Index\]\s+Name\n((?:\s+\[\s*\d+\].*\n)*)")


def code_sections(path):
    """(index -> (name, size)) of the executable sections, and (index ->
    COMDAT signature) of those in a group."""
    out = subprocess.run(["readelf", "-SWg", str(path)], capture_output=True, text=True,
                         check=True).stdout
    code = {int(i): (name, int(size, 16)) for i, name, kind, size, flags in SECTION.findall(out)
            if kind == "PROGBITS" and "X" in flags}
    groups = {int(i): signature for signature, members in GROUP.findall(out)
              for i in re.findall(r"\[\s*(\d+)\]", members)}
    return code, groups


def measure(objects):
    per_object = linked = 0
    kept = set()
    for path in objects:
        code, groups = code_sections(path)
        for index, (name, size) in sorted(code.items()):
            per_object += size
            key = (groups.get(index), name)
            if key[0] is None or key not in kept:
                kept.add(key)
                linked += size
    return per_object, linked


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    for directory in sys.argv[1:]:
        objects = sorted(p for p in pathlib.Path(directory).rglob("*.o")
                         if not re.search(r"CMakeFiles/(\d+\.\d+|CMakeScratch|_CMake)", str(p)))
        if not objects:
            raise SystemExit(f"{directory}: no object files")
        per_object, linked = measure(objects)
        print(f"{directory}\t{len(objects)} objects\tper-object .text {per_object}\t"
              f"COMDAT groups once {linked}")


if __name__ == "__main__":
    main()
