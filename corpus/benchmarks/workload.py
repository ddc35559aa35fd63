#!/usr/bin/env python3
"""Deterministic workload files for the recipes' benchmarks (docs/run-cost.md).

    workload.py KIND BYTES SEED OUT

KIND: text (words of a made-up vocabulary with Zipf-like frequencies, in
lines of varying length: what compressors and parsers see most), binary
(records of small integers, runs, and noise: what a codec sees in tables and
images), or mixed (alternating chunks of both). The bytes depend only on the
arguments: everything is drawn from random.Random(SEED).random(), the one
sequence Python promises to keep across versions.
"""
import random
import sys

LETTERS = "etaoinshrdlcumwfgypbvkjxqz"


def vocabulary(rng, size):
    words = []
    for _ in range(size):
        length = 1 + int(rng.random() * rng.random() * 11)
        # Frequent letters more often: an index skewed towards 0.
        words.append("".join(LETTERS[int(len(LETTERS) * rng.random() ** 2)] for _ in range(length)))
    return words


def text(rng, size):
    words = vocabulary(rng, 2000)
    # Zipf-like: word i with weight 1/(i+1), drawn by inverting the cumulative sum.
    cumulative, total = [], 0.0
    for i in range(len(words)):
        total += 1.0 / (i + 1)
        cumulative.append(total)
    out, line, length = [], [], 0
    produced = 0
    while produced < size:
        target = rng.random() * total
        low, high = 0, len(cumulative) - 1
        while low < high:
            middle = (low + high) // 2
            if cumulative[middle] < target:
                low = middle + 1
            else:
                high = middle
        word = words[low]
        line.append(word)
        length += len(word) + 1
        if length > 20 + rng.random() * 60:
            text_line = " ".join(line) + ".\n"
            out.append(text_line)
            produced += len(text_line)
            line, length = [], 0
    return "".join(out).encode()[:size]


def binary(rng, size):
    out = bytearray()
    while len(out) < size:
        kind = rng.random()
        count = 16 + int(rng.random() * 496)
        if kind < 0.5:  # records: small, slowly changing integers
            base = int(rng.random() * 200)
            for _ in range(count):
                base = (base + int(rng.random() * 5) - 2) & 0xFF
                out += bytes((base, int(rng.random() * 4), 0, 0))
        elif kind < 0.7:  # a run
            out += bytes((int(rng.random() * 256),)) * count
        else:  # noise
            out += bytes(int(rng.random() * 256) for _ in range(count))
    return bytes(out[:size])


def mixed(rng, size):
    out = bytearray()
    while len(out) < size:
        chunk = 4096 + int(rng.random() * 28672)
        out += text(rng, chunk) if rng.random() < 0.5 else binary(rng, chunk)
    return bytes(out[:size])


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("text", "binary", "mixed"):
        sys.exit(__doc__)
    kind, size, seed, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    data = {"text": text, "binary": binary, "mixed": mixed}[kind](random.Random(seed), size)
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
