#!/usr/bin/env bash
# sanitize:unit: runs every unit test of the sanitize build in DIR (tests/sanitize/build.sh made
# it) under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer; the first report
# fails the test. Extra arguments go to ctest (e.g. -R scheduler).
#
#   unit.sh DIR [CTEST-ARGS...]
set -euo pipefail
dir=$1
shift
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
exec ctest --test-dir "$dir" -L '^unit$' -j "${TEPHRA_SANITIZE_TEST_JOBS:-2}" --timeout 600 \
  --output-on-failure "$@"
