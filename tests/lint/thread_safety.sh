#!/usr/bin/env bash
# lint:thread-safety: checks the clang thread-safety annotations. Run from the source directory.
#   1. configures the `clang` preset (clang-14, -Wthread-safety -Werror) in DIR;
#   2. builds the canary (tests/lint/unguarded_write.cc) and expects clang to reject it, so a
#      build that silently checks nothing cannot pass;
#   3. builds every library, daemon and the CLI: any access to a GUARDED_BY member without its
#      mutex, or call of a REQUIRES function without it, fails the build.
#
#   thread_safety.sh DIR
set -euo pipefail
dir=$1
if ! command -v clang++-14 > /dev/null; then
  echo "lint:thread-safety: clang++-14 is not installed (hack/install-deps.sh installs it)" >&2
  exit 1
fi
mkdir -p "$dir"
cmake --preset clang -B "$dir" > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
if cmake --build "$dir" --target thread_safety_canary > "$dir/canary.log" 2>&1; then
  echo "lint:thread-safety: the canary compiled; -Wthread-safety is not in effect" >&2
  exit 1
fi
if ! grep -q "requires holding mutex 'mu_'" "$dir/canary.log"; then
  echo "lint:thread-safety: the canary failed for another reason:" >&2
  cat "$dir/canary.log" >&2
  exit 1
fi
echo "canary rejected as expected"
cmake --build "$dir" -j "${TEPHRA_LINT_BUILD_JOBS:-2}"
