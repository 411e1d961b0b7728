#!/usr/bin/env bash
# Network-topology benchmark (in-process, release build): tightest-fit vs first-feasible vs no
# topology on one simulated arrival sequence (4 spines x 8 racks x 16 nodes of 8 GPUs), and the
# scheduling rate with and without topology at 5,000 nodes. Writes bench/results/topology.json.
#   bench/topology.sh [extra bench_topology flags, e.g. --seed 2 --steps 100 --repeat 3]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${TEPHRA_BENCH_PRESET:-release}
mkdir -p "$root/bench/results"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target bench_topology -j1 >/dev/null
"$root/build/$preset/bin/bench_topology" --json "$root/bench/results/topology.json" "$@"
