#!/usr/bin/env bash
# Runs one libFuzzer target (built by the `fuzz` preset) for a bounded time, starting from its
# seed corpus, and fails on any crash, leak, timeout (an input taking over 10 s) or out-of-memory.
# New inputs go to WORKDIR; the committed seeds stay read-only. Prints the number of executions.
#
#   run_fuzzer.sh BINARY SECONDS WORKDIR SEED_CORPUS [GENERATOR]
#
# TEPHRA_FUZZ_SECONDS in the environment overrides SECONDS. GENERATOR is a script that writes
# inputs too large to commit (the issue's reproductions) into a directory; they are run once
# each before fuzzing.
set -euo pipefail
bin=$1
seconds=${TEPHRA_FUZZ_SECONDS:-$2}
work=$3
seeds=$4
generator=${5:-}
name=$(basename "$bin")
mkdir -p "$work/corpus"
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
flags=(-timeout=10 -rss_limit_mb=4096 -artifact_prefix="$work/$name-")

if [[ -n "$generator" ]]; then
  rm -rf "$work/generated" && mkdir -p "$work/generated"
  python3 "$generator" "$work/generated"
  # Large on purpose: they may take longer than fuzzing's 10 s per input under the sanitizers.
  if ! "$bin" -timeout=300 -rss_limit_mb=4096 "$work/generated"/* > "$work/generated.log" 2>&1; then
    echo "$name: a generated input failed:"; tail -n 60 "$work/generated.log"; exit 1
  fi
  echo "$name: $(ls "$work/generated" | wc -l) generated inputs passed"
fi

rc=0
"$bin" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 "$work/corpus" "$seeds" \
  > "$work/$name.log" 2>&1 || rc=$?
execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/$name.log" | awk '{print $2}')
echo "$name: ${execs:-?} executions in ${seconds}s (exit $rc; log $work/$name.log)"
if [[ $rc -ne 0 ]]; then tail -n 60 "$work/$name.log"; fi
exit $rc
