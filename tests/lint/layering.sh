#!/usr/bin/env bash
# lint:layering: shows that the configure rejects a scheduler library that links the Kubernetes
# client (tephra_forbid_links, cmake/TephraTargets.cmake). Run from the source directory.
#   1. configures the tree in DIR (no tests, no benchmarks: only the libraries matter) with
#      TEPHRA_LAYERING_CANARY naming libraries that then link tephra::kube (tests/lint/CMakeLists.txt);
#   2. expects the configure to fail, naming each broken rule with its path of links: the
#      framework, a plugin and an action linking the client directly, and the builtins through
#      the plugins.
# The ordinary configure of every build is the other half: it passes only while no rule is broken.
#
#   layering.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
canary="scheduler_framework;scheduler_plugins;scheduler_actions"
if cmake -S . -B "$dir" -G Ninja -DTEPHRA_BUILD_TESTS=OFF -DTEPHRA_BUILD_BENCH=OFF \
    -DTEPHRA_USE_CCACHE=OFF "-DTEPHRA_LAYERING_CANARY=$canary" > "$dir/configure.log" 2>&1; then
  echo "lint:layering: the canary configured; the layering rules are not in effect" >&2
  exit 1
fi
status=0
for path in \
    "scheduler_framework must not link tephra::kube (a session does no I/O): tephra_scheduler_framework -> tephra_kube" \
    "scheduler_plugins must not link tephra::kube (a session does no I/O): tephra_scheduler_plugins -> tephra_kube" \
    "scheduler_actions must not link tephra::kube (a session does no I/O): tephra_scheduler_actions -> tephra_kube" \
    "scheduler_builtins must not link tephra::kube (a session does no I/O): tephra_scheduler_builtins -> tephra_scheduler_plugins -> tephra_kube"; do
  if ! tr -s ' \n' ' ' < "$dir/configure.log" | grep -qF "$path"; then
    echo "lint:layering: the configure did not report: $path" >&2
    status=1
  fi
done
if (( status )); then
  cat "$dir/configure.log" >&2
  exit 1
fi
echo "canary rejected as expected"
