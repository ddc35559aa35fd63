#!/usr/bin/env bash
# paired-time.sh RUNS 'COMMAND A' 'COMMAND B'
#
# What A costs against B in CPU (user + system seconds of the command and
# every child it waited for, as GNU time reports them), run in turn A B A B
# … RUNS times each, so that a drift of the machine's speed moves both. It
# prints each run's figures, then the medians and the median of the
# pair-by-pair A/B ratios with their minimum and maximum: quote the median
# ratio; a wide min–max says the machine was noisy. Each command runs under
# `bash -c`; its output goes to /dev/null (put a redirection in the command
# to keep it). The project's build-cost figures (docs/inlining-results.md,
# docs/deployment.md, docs/pass-pipeline.md) were taken this way, e.g.
#   bench/paired-time.sh 3 'bash bench/deploy/build-once.sh flac /tmp/a inlining-oz' \
#                          'bash bench/deploy/build-once.sh flac /tmp/b'
set -euo pipefail
[ $# -eq 3 ] && [[ "$1" =~ ^[1-9][0-9]*$ ]] || {
  sed -n '2,14p' "$0"
  exit 2
}
runs=$1 a=$2 b=$3
[ -x /usr/bin/time ] || {
  echo "paired-time: /usr/bin/time (GNU time, Debian package 'time') is missing" >&2
  exit 1
}
times=$(mktemp)
trap 'rm -f "$times"' EXIT
cpu() { # cpu COMMAND: prints "user system wall" of one run
  /usr/bin/time -o "$times" -f "%U %S %e" bash -c "$1" >/dev/null 2>&1 ||
    echo "paired-time: exit status $? from: $1" >&2
  cat "$times"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
a_cpu=() b_cpu=() ratios=()
for ((run = 1; run <= runs; ++run)); do
  read -r au as aw <<<"$(cpu "$a")"
  read -r bu bs bw <<<"$(cpu "$b")"
  a_cpu+=("$(awk -v u="$au" -v s="$as" 'BEGIN {print u + s}')")
  b_cpu+=("$(awk -v u="$bu" -v s="$bs" 'BEGIN {print u + s}')")
  ratios+=("$(awk -v x="${a_cpu[-1]}" -v y="${b_cpu[-1]}" 'BEGIN {printf "%.4f", x / y}')")
  echo "run $run: A cpu ${a_cpu[-1]} s (wall $aw s), B cpu ${b_cpu[-1]} s (wall $bw s), A/B ${ratios[-1]}"
done
echo "A cpu median $(printf '%s\n' "${a_cpu[@]}" | median) s; B cpu median $(printf '%s\n' "${b_cpu[@]}" | median) s"
echo "A/B cpu median $(printf '%s\n' "${ratios[@]}" | median) (min $(printf '%s\n' "${ratios[@]}" | sort -g | head -1), max $(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)), $runs pairs"
