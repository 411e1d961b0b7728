#!/bin/sh
# tephra-scheduler --check-conf FILE must exit with CODE and print TEXT (stdout or stderr).
# Usage: check_conf_test.sh SCHEDULER FILE CODE TEXT
out=$("$1" --check-conf "$2" 2>&1)
code=$?
printf '%s\n' "$out"
if [ "$code" -ne "$3" ]; then
  echo "exit code $code, want $3"
  exit 1
fi
printf '%s\n' "$out" | grep -qF -- "$4" || { echo "missing: $4"; exit 1; }
