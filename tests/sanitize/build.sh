#!/usr/bin/env bash
# sanitize-build: configures the `sanitize` preset (clang-14, ASan + UBSan, -Wthread-safety
# -Werror, libFuzzer instrumentation) in DIR and builds it. Run from the source directory.
#   1. the canary (tests/lint/unguarded_write.cc) must be refused, so a build that silently
#      checks no lock annotation cannot pass;
#   2. every library, daemon, the CLI, the unit tests and the fuzz targets are built: an access
#      to a GUARDED_BY member without its mutex, or a call of a REQUIRES function without it,
#      fails the build.
#
#   build.sh DIR
set -euo pipefail
dir=$1
if ! command -v clang++-14 > /dev/null; then
  echo "sanitize-build: clang++-14 is not installed (hack/install-deps.sh installs it)" >&2
  exit 1
fi
mkdir -p "$dir"
cmake --preset sanitize -B "$dir" > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
if cmake --build "$dir" --target thread_safety_canary > "$dir/canary.log" 2>&1; then
  echo "sanitize-build: the canary compiled; -Wthread-safety is not in effect" >&2
  exit 1
fi
if ! grep -q "requires holding mutex 'mu_'" "$dir/canary.log"; then
  echo "sanitize-build: the canary failed for another reason:" >&2
  cat "$dir/canary.log" >&2
  exit 1
fi
echo "thread-safety canary refused as expected"
cmake --build "$dir" -j "${TEPHRA_SANITIZE_BUILD_JOBS:-2}"
