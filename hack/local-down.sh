#!/usr/bin/env bash
# Stops what hack/local-up.sh started: the three daemons, then the control plane with its
# simulated nodes (its directory, and so every object in it, is removed).
#
#   hack/local-down.sh           TEPHRA_LOCAL_NAME picks the control plane (default: local)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=${TEPHRA_LOCAL_NAME:-local}
if ! "$root/hack/control-plane.sh" env --name "$name" >/dev/null 2>&1; then
  echo "local-down: nothing to stop (no control plane named '$name')" >&2
  exit 0
fi
"$root/hack/local-daemons.sh" stop --name "$name"
"$root/hack/control-plane.sh" down --name "$name"
