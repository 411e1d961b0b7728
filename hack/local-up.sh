#!/usr/bin/env bash
# Tephra's main job on this machine, in one command: builds Tephra, starts a real control plane
# on 127.0.0.1 with simulated kwok nodes, installs the Helm chart in local mode, runs the three
# daemons as local processes with the identities the chart created, and schedules an example
# gang job. Re-running it is safe: it keeps a running control plane as it is (nodes included),
# upgrades the release, restarts the daemons on the fresh build and submits the example again.
# Stop everything with hack/local-down.sh.
#
#   hack/local-up.sh [--nodes 8] [--node-cpu 32] [--node-memory 256Gi] [--no-build]
#   TEPHRA_LOCAL_NAME=local   the control plane's name (hack/control-plane.sh --name)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=local-up; source "$root/hack/lib.sh"
cd "$root"
name=${TEPHRA_LOCAL_NAME:-local}
nodes=8 node_cpu=32 node_memory=256Gi build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --node-cpu) node_cpu=$2; shift 2 ;;
    --node-memory) node_memory=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "local-up: unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
  esac
done
# The chart's CRDs are symlinks to crds/; helm reports each one on every command.
helm_() { helm "$@" 2> >(grep -v 'found symbolic link in path' >&2); }

if (( build )); then
  step "installing Debian packages"
  bash hack/install-deps.sh
  step "building control-plane tools (cached under ~/.cache/tephra)"
  hack/build-tools.sh >/dev/null
  step "building the daemons"
  cmake --preset dev >/dev/null
  cmake --build --preset dev --target tephra-scheduler tephra-controller-manager tephra-admission tephractl
fi

# A control plane left from an earlier run is kept if it still answers, replaced if not (e.g.
# after a reboot its processes are gone but its directory is not).
if cp_env=$(hack/control-plane.sh env --name "$name" 2>/dev/null) && eval "$cp_env" &&
   curl -sf --cacert "$TEPHRA_CA_FILE" "$TEPHRA_APISERVER/readyz" >/dev/null; then
  step "reusing control plane '$name' at $TEPHRA_APISERVER"
else
  hack/local-daemons.sh stop --name "$name" 2>/dev/null || true
  hack/control-plane.sh down --name "$name" >/dev/null 2>&1 || true
  step "starting control plane '$name' with $nodes nodes of $node_cpu CPU / $node_memory"
  hack/control-plane.sh up --name "$name" --nodes "$nodes" --node-cpu "$node_cpu" \
    --node-memory "$node_memory" >/dev/null
  eval "$(hack/control-plane.sh env --name "$name")"
fi

# The daemons stop first so that their ports are free again; fresh free ports every run keep
# several local clusters (and tests) apart.
hack/local-daemons.sh stop --name "$name"
read -r p_webhook p_admission p_cm p_sched p_admin p_dashboard <<<"$(python3 hack/free_ports.py 6)"

step "helm upgrade --install tephra (local mode) into $TEPHRA_NAMESPACE"
helm_ upgrade --install tephra charts/tephra --namespace "$TEPHRA_NAMESPACE" --create-namespace \
  -f charts/tephra/values-local.yaml --set "admission.port=$p_webhook" \
  --set "admission.healthzPort=$p_admission" --set "controllerManager.healthzPort=$p_cm" \
  --set "scheduler.metricsPort=$p_sched" \
  --set "scheduler.admin.enabled=true" --set "scheduler.admin.port=$p_admin" \
  --set "scheduler.dashboard.enabled=true" --set "scheduler.dashboard.port=$p_dashboard" >/dev/null
# tephractl finds the scheduler's admin API (job explain, queue usage) through the control
# plane's environment.
sed -i '/^export TEPHRA_ADMIN_ADDRESS=/d' "$TEPHRA_CP_DIR/env"
echo "export TEPHRA_ADMIN_ADDRESS=127.0.0.1:$p_admin" >>"$TEPHRA_CP_DIR/env"
export TEPHRA_ADMIN_ADDRESS=127.0.0.1:$p_admin

step "starting tephra-admission, tephra-controller-manager and tephra-scheduler"
hack/local-daemons.sh start --name "$name" --bin "$root/build/dev/bin"

step "submitting the example queues and the gang job demo/tf-dist-mnist"
kubectl apply -f examples/queues.yaml >/dev/null
kubectl create namespace demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
# Submitted afresh each run so that every run shows a gang being scheduled.
kubectl -n demo delete job.batch.volcano.sh tf-dist-mnist --ignore-not-found --wait=true >/dev/null
kubectl -n demo apply -f examples/job-tensorflow.yaml >/dev/null
# A gang that waits (no node has the label it asks for), so the dashboard has a waiting job to
# explain. big-gang is its earlier form, which asked for 96 CPUs and so took the default queue's
# share of the cluster: removed if an earlier run left it.
kubectl -n demo delete job.batch.volcano.sh big-gang waiting-gang --ignore-not-found --wait=true \
  >/dev/null
kubectl -n demo apply -f examples/job-waiting.yaml >/dev/null
# The PodGroup is named <job>-<job uid>.
uid=$(kubectl -n demo get job.batch.volcano.sh tf-dist-mnist -o 'jsonpath={.metadata.uid}')
pg="tf-dist-mnist-$uid"
deadline=$(( $(date +%s) + 60 ))
until [[ "$(kubectl -n demo get podgroup "$pg" -o 'jsonpath={.status.phase}' 2>/dev/null)" == Running ]]; do
  (( $(date +%s) < deadline )) ||
    die "the gang job was not scheduled within 60s; see the daemons' logs in $TEPHRA_CP_DIR/logs"
  sleep 0.2
done
step "gang scheduled: PodGroup $pg is Running"

# A newcomer's first gang in the default queue (4 pods of 3 CPUs) must run at once beside the
# demo's jobs: the demo leaves the default queue its share of the cluster.
step "checking that a 12-CPU gang in the default queue runs at once"
kubectl -n demo delete job.batch.volcano.sh first-gang --ignore-not-found --wait=true >/dev/null
kubectl -n demo apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: first-gang}
spec:
  schedulerName: volcano
  minAvailable: 4
  queue: default
  tasks:
  - name: worker
    replicas: 4
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: main, image: busybox, resources: {requests: {cpu: "3", memory: 1Gi}}}
YAML
uid=$(kubectl -n demo get job.batch.volcano.sh first-gang -o 'jsonpath={.metadata.uid}')
deadline=$(( $(date +%s) + 60 ))
until [[ "$(kubectl -n demo get podgroup "first-gang-$uid" -o 'jsonpath={.status.phase}' 2>/dev/null)" == Running ]]; do
  if (( $(date +%s) >= deadline )); then
    build/dev/bin/tephractl -n demo job explain first-gang >&2 || true
    die "a 12-CPU gang in the default queue was not scheduled within 60s"
  fi
  sleep 0.2
done
kubectl -n demo delete job.batch.volcano.sh first-gang --wait=false >/dev/null
step "the default queue's gang ran: PodGroup first-gang-$uid was Running"
kubectl -n demo get pods -o wide
kubectl -n demo get job.batch.volcano.sh,podgroup

logs=$TEPHRA_CP_DIR/logs
cat <<EOF

Tephra runs on control plane '$name' (kube-apiserver $TEPHRA_APISERVER, $(kubectl get nodes --no-headers | wc -l) simulated nodes).
Use it:
  eval "\$(hack/control-plane.sh env --name $name)"     # KUBECONFIG=$KUBECONFIG, kubectl, helm
  kubectl get vcjob,podgroup -A; kubectl get queue     # the example job completes in ~30 s
Logs:
  $logs/tephra-admission.log
  $logs/tephra-controller-manager.log
  $logs/tephra-scheduler.log
  $logs/{kube-apiserver,etcd,kwok,kube-controller-manager}.log
Dashboard: http://127.0.0.1:$p_dashboard/  (queues and their shares, jobs and why they wait, nodes, the last hour)
  demo/waiting-gang waits on purpose: http://127.0.0.1:$p_dashboard/#/job/demo/waiting-gang
Metrics: http://127.0.0.1:$p_sched/metrics (scheduler), :$p_cm (controller manager), :$p_admission (admission)
Admin API: 127.0.0.1:$p_admin (TEPHRA_ADMIN_ADDRESS in the environment above), e.g.
  build/dev/bin/tephractl -n demo job explain tf-dist-mnist
Stop everything:
  hack/local-down.sh
EOF
