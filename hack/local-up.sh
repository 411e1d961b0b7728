#!/usr/bin/env bash
# Tephra's main job on one machine: a real control plane on 127.0.0.1 with simulated nodes.
#
#   hack/local-up.sh [--nodes N]   start (default 8 nodes of 16 CPU / 64Gi) and print the env
#   hack/local-up.sh down          stop and remove everything
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=${TEPHRA_LOCAL_NAME:-local}

if [[ "${1:-}" == "down" ]]; then
  exec "$root/hack/control-plane.sh" down --name "$name"
fi
nodes=8
if [[ "${1:-}" == "--nodes" ]]; then nodes=$2; fi

bash "$root/hack/install-deps.sh"
"$root/hack/control-plane.sh" up --name "$name" --nodes "$nodes" --node-cpu 16 --node-memory 64Gi >/dev/null
eval "$("$root/hack/control-plane.sh" env --name "$name")"
kubectl get nodes -o wide
cat <<EOF2

Local control plane '$name' is up. Use it with:
  eval "\$(hack/control-plane.sh env --name $name)"
Stop it with:
  hack/local-up.sh down
EOF2
