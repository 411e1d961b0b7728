#!/usr/bin/env bash
# Preemption benchmark (in-process, release build): decision time for one 100-pod gang on 5,000
# full nodes running 100,000 pods, and victim counts against an exhaustive optimum on small
# random clusters. Writes bench/results/preempt.json.
#   bench/preempt.sh [extra bench_preempt flags, e.g. --nodes 500 --running 10000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${TEPHRA_BENCH_PRESET:-release}
mkdir -p "$root/bench/results"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target bench_preempt >/dev/null
"$root/build/$preset/bin/bench_preempt" --json "$root/bench/results/preempt.json" "$@"
