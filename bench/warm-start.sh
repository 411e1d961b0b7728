#!/usr/bin/env bash
# Warm start and standby take-over of tephra-scheduler on a real control plane (issue 26.5).
#
#   bench/warm-start.sh [--quick | --full]
#
#   --quick  500 nodes, 10,000 running pods, 1,000 pending, 200 arriving at the take-over
#   --full   5,000 nodes, 100,000 running pods, 10,000 pending, 1,000 arriving at the take-over
#            (kwok's node lease is 600 s there, so that 5,000 nodes renew theirs about 33
#            times a second rather than 500; creating the pods takes most of the run)
#
# A cluster already full of running pods (with their Running PodGroups, as a scheduler left
# them) gets pending gangs and plain pods while no scheduler runs. Then tephra-scheduler starts
# cold: time to its first bind and until every pending pod is bound. A standby starts and warms
# its cache; the leader is killed (SIGKILL, so the lease is not handed over) and more pods
# arrive: time until the lease moves and until the new pods are bound. Lease duration 15 s
# (the default). Output: bench/results/warm-start-<preset>.json; the daemons' and the control
# plane's logs in bench/results/warm-start-<preset>/ (not committed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

preset=quick
case ${1:-} in
  --quick | "") ;;
  --full) preset=full ;;
  *) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
if [[ $preset == quick ]]; then nodes=500 running=10000 pending=1000 takeover=200 lease=40
else nodes=5000 running=100000 pending=10000 takeover=1000 lease=600; fi

out="$root/bench/results"
logs="$out/warm-start-$preset"
mkdir -p "$logs"
step() { echo "==> $* ($(date +%T))" >&2; }

step "build"
bash hack/install-deps.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target bench_e2e bench_warm_start tephra-scheduler >/dev/null
bin="$root/build/release/bin"

cp_name="warm-$$"
cleanup() {  # the control plane's logs go with the daemons', for a run that went wrong
  [[ -n "${TEPHRA_CP_DIR:-}" ]] && cp "$TEPHRA_CP_DIR"/logs/*.log "$logs/" 2>/dev/null
  hack/control-plane.sh down --name "$cp_name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
step "control plane $cp_name"
hack/control-plane.sh up --name "$cp_name" --nodes 0 --node-lease "$lease" >/dev/null
eval "$(hack/control-plane.sh env --name "$cp_name")"
kubectl apply --server-side -f crds/ >/dev/null
kubectl wait --for condition=established --timeout=60s crd/podgroups.scheduling.volcano.sh \
  crd/queues.scheduling.volcano.sh >/dev/null

step "$nodes nodes"
"$bin/bench_e2e" setup --kubeconfig "$KUBECONFIG" --nodes "$nodes"
step "$running running pods"
"$bin/bench_warm_start" fill --kubeconfig "$KUBECONFIG" --namespace warm-running \
  --nodes "$nodes" --pods "$running"

free_ports() { python3 "$root/hack/free_ports.py" "$1"; }  # N distinct ports, below the ephemeral range
read -r lport sport <<<"$(free_ports 2)"
# The same flags as the end-to-end benchmark's (bench/run.sh), with leader election on.
scheduler="$bin/tephra-scheduler --kubeconfig $KUBECONFIG --leader-elect=true \
--leader-elect-resource-namespace default --kube-api-qps 5000 --kube-api-burst 5000 \
--bind-workers 128 --status-workers 32"
step "measure: $pending pending, then $takeover at the take-over"
"$bin/bench_warm_start" measure --kubeconfig "$KUBECONFIG" --namespace warm \
  --pods "$pending" --takeover-pods "$takeover" --lease default/volcano \
  --leader "exec $scheduler --listen-address 127.0.0.1:$lport 2>$logs/leader.log" \
  --standby "exec $scheduler --listen-address 127.0.0.1:$sport 2>$logs/standby.log" \
  --standby-readyz "http://127.0.0.1:$sport/readyz" \
  --json "$out/warm-start-$preset.json"
