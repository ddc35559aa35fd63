#!/usr/bin/env bash
# How ES under MPI scales, measured on this machine (figures, no assertions).
#
#   bench/cluster/scaling.sh BUILD_DIR CORPUS [OUT_DIR]
#
# 1. Real compile times of CORPUS's modules (mlgo-eval's trace, in-process
#    workers, -Oz decisions) become the stand-in compiler's sleeps
#    (MLGO_STANDIN_COMPILER): jobs then cost wall time but no CPU, so 8 and 32
#    ranks fit on two cores and show what the scheduling, the exchange and
#    stragglers cost: ES steps per hour against N x one rank (one slot each).
# 2. The exchange alone: a stand-in that answers at once, 1 vs 3 ranks.
# 3. Bytes rank 0 sends per ES step for a ~10k-parameter policy (hidden
#    100,20) and 100 directions.
# 4. The real compiler on this 2-core machine: 1, 2 and 3 ranks
#    (oversubscribed beyond 2), compilations per second and steps per hour.
# 5. The decision-sequence cache's hit rate on 3 ranks against one machine.
set -euo pipefail
build=$(cd "$1" && pwd)
corpus=$(cd "$2" && pwd)
out=${3:-/tmp/mlgo-cluster-scaling}
mkdir -p "$out"
cd "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
es=$build/apps/es-train
eval_=$build/apps/mlgo-eval
py=/usr/bin/python3
mpi() { mpirun --oversubscribe --bind-to none -np "$@"; }

echo "== compile times of $corpus"
"$eval_" run heuristic "$corpus" -j 1 --no-per-module --trace times.h5 >/dev/null
"$py" - <<'PY'
import h5py, numpy as np
t = h5py.File("times.h5", "r")
names = [n.decode() for n in t["/modules/name"][()]]
secs = t["/modules/seconds"][()]
with open("times.tsv", "w") as f:
    for n, s in zip(names, secs):
        f.write(f"{s:.6f}\t{n}\n")
with open("zero.tsv", "w") as f:
    for n in names:
        f.write(f"0\t{n}\n")
print(f"{len(names)} modules: median {np.median(secs)*1000:.0f} ms, mean {secs.mean()*1000:.0f} ms, "
      f"max {secs.max()*1000:.0f} ms")
PY

# steps/hour of a run file (the first step holds the baselines: left out)
rate() {
  "$py" -c "
import h5py, numpy as np
s = h5py.File('$1', 'r')['/steps/seconds_step'][()]
s = s[1:] if len(s) > 1 else s
print(f'{3600 / s.mean():.1f}')"
}

# Starting policies made with the real compiler (the stand-in sends no
# features to learn): 8 hidden units, and ~10k parameters (hidden 100, 20).
small=$corpus
[ -d "$build/corpora/zlib/corpus" ] && small=$build/corpora/zlib/corpus
policy_of() {
  "$es" --corpus "$small" --steps 1 --directions 1 --modules-per-step 1 --vocabulary-quantiles 20 \
    --seed 1 --overwrite -o "$1.h5" "${@:2}" >/dev/null
  "$py" -c "
import h5py
open('$1.json', 'w').write(h5py.File('$1.h5', 'r')['/policies/final/json'][0].decode())"
}
policy_of init-small --hidden 8
policy_of init-10k --hidden 100 20

standin_es=(--corpus "$corpus" --directions 20 --modules-per-step 8 --initial-policy init-small.json
            --seed 1 --no-replay --no-decision-cache --no-baseline-cache --overwrite)

echo "== stand-in compiler (real compile times as sleeps), 1 slot per rank"
export MLGO_STANDIN_COMPILER=$out/times.tsv
"$es" "${standin_es[@]}" --steps 3 -j 1 -o standin-1.h5 >/dev/null
one=$(rate standin-1.h5)
echo "ranks  steps/hour  ideal  efficiency"
echo "1      $one  $one  1.00"
for n in 8 32; do
  mpi "$n" "$es" "${standin_es[@]}" --steps 4 -j 1 -o "standin-$n.h5" >"standin-$n.log"
  r=$(rate "standin-$n.h5")
  "$py" -c "print(f'$n      $r  {$n*$one:.1f}  {$r/($n*$one):.2f}')"
done

echo "== the exchange alone (stand-in answering at once), seconds per step"
export MLGO_STANDIN_COMPILER=$out/zero.tsv
"$es" "${standin_es[@]}" --steps 6 -j 1 -o zero-1.h5 >/dev/null
mpi 3 "$es" "${standin_es[@]}" --steps 6 -j 1 -o zero-3.h5 >/dev/null
for f in zero-1 zero-3; do
  "$py" -c "
import h5py
s = h5py.File('$f.h5', 'r')['/steps/seconds_step'][1:]
print(f'$f: {s.mean()*1000:.1f} ms per step of 40 candidates x 8 modules')"
done

echo "== bytes per ES step: hidden 100,20, 100 directions (antithetic: 200 candidates)"
mpi 3 "$es" --corpus "$corpus" --directions 100 --modules-per-step 2 --initial-policy init-10k.json \
  --seed 1 --no-replay --no-baseline-cache --overwrite --steps 2 -j 1 \
  -o bytes.h5 | grep -E "parameters|^cluster"
unset MLGO_STANDIN_COMPILER

echo "== the real compiler on this machine (2 cores): ranks x 1 slot and 1 rank x 2"
real_es=(--corpus "$corpus" --directions 6 --modules-per-step 8 --initial-policy init-small.json
         --seed 1 --no-replay --no-decision-cache --steps 4 --overwrite)
report() {
  "$py" -c "
import h5py
f = h5py.File('$2', 'r')
s = f['/steps/seconds_step'][1:]
c = f['/steps/compilations'][1:]
print(f'$1: {c.sum()/s.sum():.1f} compilations/s, {3600/s.mean():.0f} steps/hour')"
}
"$es" "${real_es[@]}" -j 1 -o real-1x1.h5 >/dev/null && report "1 rank x 1 slot" real-1x1.h5
"$es" "${real_es[@]}" -j 2 -o real-1x2.h5 >/dev/null && report "1 rank x 2 slots" real-1x2.h5
mpi 2 "$es" "${real_es[@]}" -j 1 -o real-2.h5 >/dev/null && report "2 ranks x 1 slot" real-2.h5
mpi 3 "$es" "${real_es[@]}" -j 1 -o real-3.h5 >/dev/null && report "3 ranks x 1 slot" real-3.h5

echo "== the decision-sequence cache across ranks (replay off so that every job compiles)"
cache_es=(--corpus "$corpus" --directions 6 --modules-per-step 8 --initial-policy init-small.json
          --seed 1 --no-replay --steps 6 --overwrite)
hits() {
  "$py" -c "
import h5py
f = h5py.File('$2', 'r')['/steps']
h, l = f['cache_hits'][()].sum(), f['cache_lookups'][()].sum()
print(f'$1: {h:.0f} of {l:.0f} lookups hit ({h/l:.0%})')"
}
"$es" "${cache_es[@]}" -j 2 -o cache-1.h5 >/dev/null
hits "1 rank x 2 slots" cache-1.h5
mpi 3 "$es" "${cache_es[@]}" -j 1 -o cache-3.h5 >/dev/null
hits "3 ranks x 1 slot" cache-3.h5
