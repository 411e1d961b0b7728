#!/usr/bin/env bash
# Chaos soak: tests/e2e/chaos/chaos_run for a long time (default 60 min) on its own control plane
# whose pod watches bypass the watch cache (so etcd compaction forces 410 Gone on the daemons'
# pod watches), with every fault kind repeatedly, 5,000-pod bursts and each daemon's memory
# sampled every 30 s. Writes bench/results/chaos-soak.txt (the report) and chaos-soak-memory.csv.
#   bench/chaos-soak.sh [MINUTES] [SEED]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
minutes=${1:-60}
seed=${2:-$RANDOM}
preset=${TEPHRA_BENCH_PRESET:-dev}
name=chaos-soak-$$
mkdir -p "$root/bench/results"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target chaos_run >/dev/null
trap '"$root/hack/control-plane.sh" down --name "$name" >/dev/null' EXIT
"$root/hack/control-plane.sh" up --name "$name" --nodes 1 --uncached-watch pods,configmaps >/dev/null
eval "$("$root/hack/control-plane.sh" env --name "$name")"
# Jobs over the first 80% of the run at about one every 4 s; faults every 30-90 s.
"$root/build/$preset/bin/chaos_run" --seed="$seed" --duration=$((minutes * 60)) \
  --jobs=$((minutes * 12)) --nodes=8 --burst-pods=5000 --fault-gap-min=30 --fault-gap-max=90 \
  --memory-interval=30 --settle=600 --report="$root/bench/results/chaos-soak.txt" \
  --memory-csv="$root/bench/results/chaos-soak-memory.csv"
