#!/usr/bin/env bash
# Configures the `fuzz` preset (clang-14, libFuzzer, ASan and UBSan) in a build directory of its
# own and builds the given fuzz targets; run from the source directory. Used by the `fuzz` CTest
# label of an ordinary build (see tephra_fuzz_in_ctest in cmake/TephraTargets.cmake).
#
#   build_fuzzers.sh DIR TARGET...
set -euo pipefail
dir=$1
shift
if ! command -v clang++-14 > /dev/null; then
  echo "fuzz-build: clang++-14 is not installed (hack/install-deps.sh installs it)" >&2
  exit 1
fi
cmake --preset fuzz -B "$dir" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "${TEPHRA_FUZZ_BUILD_JOBS:-2}" --target "$@"
