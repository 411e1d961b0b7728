#!/usr/bin/env bash
# tephra-admission benchmark: /jobs/validate reviews over loopback TLS from 64 keep-alive
# connections, at a fixed offered load of 1,000 requests/s and at maximum throughput, against
# the daemon's own HTTPS server and handler (release build). No control plane needed: the queue
# cache is in memory. Writes bench/results/admission.json.
#   bench/admission.sh [RATE] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rate=${1:-1000}
seconds=${2:-10}
preset=${TEPHRA_BENCH_PRESET:-release}
mkdir -p "$root/bench/results"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target bench_admission >/dev/null
"$root/build/$preset/bin/bench_admission" --connections 64 --rate "$rate" --seconds "$seconds" \
  --json "$root/bench/results/admission.json"
