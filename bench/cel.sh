#!/usr/bin/env bash
# CEL device selectors (docs/cel.md): compile time, and evaluation time and heap allocations
# per device over 1,000 devices, release build. Writes bench/results/cel.json.
#   bench/cel.sh [google-benchmark flags...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${TEPHRA_BENCH_PRESET:-release}
mkdir -p "$root/bench/results"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target bench_cel >/dev/null
"$root/build/$preset/bin/bench_cel" --benchmark_out="$root/bench/results/cel.json" \
  --benchmark_out_format=json "$@"
