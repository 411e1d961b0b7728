#!/bin/sh
# tephra-scheduler --check-conf FILE must exit with CODE and print TEXT (stdout or stderr), and
# not print ABSENT when given.
# Usage: check_conf_test.sh SCHEDULER FILE CODE TEXT [ABSENT]
out=$("$1" --check-conf "$2" 2>&1)
code=$?
printf '%s\n' "$out"
if [ "$code" -ne "$3" ]; then
  echo "exit code $code, want $3"
  exit 1
fi
printf '%s\n' "$out" | grep -qF -- "$4" || { echo "missing: $4"; exit 1; }
if [ -n "$5" ] && printf '%s\n' "$out" | grep -qF -- "$5"; then
  echo "unexpected: $5"
  exit 1
fi
