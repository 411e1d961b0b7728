#!/usr/bin/env bash
# tephra-controller-manager benchmark: pods created per second for one 1,000-replica job and
# for 100 jobs x 10 pods, and the manager's resident memory with 10,000 pods cached, against a
# real control plane of its own. Writes bench/results/controllers.json.
#   bench/controllers.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${TEPHRA_BENCH_PRESET:-release}
name="bench-ctl-$$"
out="$root/bench/results"
mkdir -p "$out"

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target bench_controllers tephra-controller-manager >/dev/null

trap '"$root/hack/control-plane.sh" down --name "$name" >/dev/null 2>&1' EXIT
"$root/hack/control-plane.sh" up --name "$name" --nodes 1 >/dev/null
eval "$("$root/hack/control-plane.sh" env --name "$name")"
kubectl apply -f "$root/crds/" >/dev/null
# The chart's RBAC for the controller-manager identity (which runs without leader election).
helm template tephra "$root/charts/tephra" -n tephra-system --set leaderElection.enabled=false \
  --show-only templates/rbac-controller-manager.yaml | kubectl apply -f - >/dev/null
kubectl wait --for condition=established --timeout=60s crd/jobs.batch.volcano.sh \
  crd/podgroups.scheduling.volcano.sh crd/queues.scheduling.volcano.sh >/dev/null
# The chart's default queue: the controller holds jobs whose queue does not exist.
helm template tephra "$root/charts/tephra" -n tephra-system \
  --show-only templates/default-queue.yaml | kubectl apply -f - >/dev/null

"$root/build/$preset/bin/bench_controllers" \
  --manager "$root/build/$preset/bin/tephra-controller-manager" \
  --admin-kubeconfig "$TEPHRA_KUBECONFIG_ADMIN" \
  --manager-kubeconfig "$TEPHRA_KUBECONFIG_CONTROLLER_MANAGER" \
  --json "$out/controllers.json"
