#!/usr/bin/env bash
# Priority between operators: a PyTorchJob of the training-operator and a RayCluster of KubeRay
# wait in the same queue for a full cluster (4 nodes of 8 CPU); when room for one of them frees
# up, the one with the higher priority runs, whichever came first and whichever operator made it.
#
#   cross_operator_test.sh SOURCE_DIR BIN_DIR     (exit 77: an operator is not built)
SRC=$1 BIN=$2
source "$SRC/tests/e2e/operators/lib.sh"
source "$SRC/tests/e2e/operators/training_operator.sh"
source "$SRC/tests/e2e/operators/kuberay.sh"
op_dir training-operator >/dev/null
op_dir kuberay >/dev/null

# A gang of four 8-CPU pods that fills the cluster, as plain Volcano pods.
blocker() {
  local i pods=""
  for i in 0 1 2 3; do
    pods+="${pods:+,}{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"blocker-$i\",
      \"labels\":{\"app\":\"blocker\"},\"annotations\":{\"scheduling.k8s.io/group-name\":\"blocker\"}},
      \"spec\":{\"schedulerName\":\"volcano\",\"containers\":[{\"name\":\"c\",\"image\":\"sim/c\",
        \"resources\":{\"requests\":{\"cpu\":\"8\"}}}]}}"
  done
  kubectl -n "$NS" create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"blocker"},
  "spec":{"minMember":4,"minResources":{"cpu":"32"}}},$pods]}
EOF
}

# priority_wins LOW_KIND HIGH_KIND: the lower-priority job (of LOW_KIND's operator) is submitted
# first, the higher-priority one second; both need 24 CPU, room for one frees up.
submit() {  # submit KIND NAME PRIORITY_CLASS
  case "$1" in
    PyTorchJob) kubeflow_job PyTorchJob "$2" "{\"priorityClass\":\"$3\"}" Master:1:8 Worker:2:8 ;;
    RayCluster) raycluster "$2" 8 2 8 "{\"ray.io/priority-class-name\":\"$3\"}" ;;
  esac
}
pods_of() { if [[ "$1" == PyTorchJob ]]; then job_pods "$2"; else ray_pods "$2"; fi; }
pg_of() { if [[ "$1" == PyTorchJob ]]; then echo "$2"; else ray_pg "$2"; fi; }

priority_wins() {
  local low_kind=$1 high_kind=$2
  blocker
  eventually 60 bound_is app=blocker 4 || fail "the blocker did not fill the cluster" || return 1
  submit "$low_kind" low op-low
  eventually 30 pg_is '{.spec.priorityClassName}' "$(pg_of "$low_kind" low)" op-low ||
    fail "the $low_kind's PodGroup has priorityClassName '$(pg '{.spec.priorityClassName}' "$(pg_of "$low_kind" low)")'" || return 1
  sleep 3  # a few scheduling sessions see the low-priority job alone
  submit "$high_kind" high op-high
  eventually 30 pg_is '{.spec.priorityClassName}' "$(pg_of "$high_kind" high)" op-high ||
    fail "the $high_kind's PodGroup has priorityClassName '$(pg '{.spec.priorityClassName}' "$(pg_of "$high_kind" high)")'" || return 1
  sleep 3
  kubectl -n "$NS" delete pods -l app=blocker --wait=false >/dev/null
  kubectl -n "$NS" delete podgroup blocker --wait=false >/dev/null
  eventually 90 bound_is "$(pods_of "$high_kind" high)" 3 ||
    fail "$(pods_bound "$(pods_of "$high_kind" high)")/3 pods of the high-priority $high_kind bound" || return 1
  stays 10 bound_is "$(pods_of "$low_kind" low)" 0 ||
    fail "$(pods_bound "$(pods_of "$low_kind" low)") pods of the low-priority $low_kind bound" || return 1
}
ray_over_pytorch() { priority_wins PyTorchJob RayCluster; }
pytorch_over_ray() { priority_wins RayCluster PyTorchJob; }

op_begin 4
kubectl apply -f - >/dev/null <<'EOF'
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"op-high"},"value":1000},
 {"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"op-low"},"value":10}]}
EOF
start_training_operator
start_kuberay
op_case "priority: RayCluster (high) over PyTorchJob (low, first)" ray_over_pytorch
op_case "priority: PyTorchJob (high) over RayCluster (low, first)" pytorch_over_ray
op_end
