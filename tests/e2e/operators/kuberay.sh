# KubeRay's ray-operator (sourced by the tests, after lib.sh): how to start it with Volcano gang
# scheduling, and RayClusters shaped as users write them.

# start_kuberay: CRDs and the operator process. --batch-scheduler=volcano makes it create a
# PodGroup per RayCluster and give the pods schedulerName volcano (the older
# --enable-batch-scheduler does the same and is deprecated). RayJob and RayService are not run
# here: their controllers call the Ray dashboard in the head pod over the network.
start_kuberay() {
  op_crds kuberay
  local metrics probe
  read -r metrics probe <<<"$(free_ports 2)"
  op_start_operator kuberay "http://127.0.0.1:$probe/readyz" --batch-scheduler=volcano \
    --metrics-addr="127.0.0.1:$metrics" --health-probe-bind-address="127.0.0.1:$probe" \
    --enable-leader-election=false
}

# raycluster NAME HEAD_CPU WORKERS WORKER_CPU [LABELS_JSON] [AUTOSCALING_MIN]: a ray.io/v1
# RayCluster in NS with one worker group. LABELS_JSON goes on the RayCluster (the queue and
# priority labels); AUTOSCALING_MIN turns on in-tree autoscaling with that minReplicas, which is
# what KubeRay makes the PodGroup's minMember from.
raycluster() {
  local name=$1 head_cpu=$2 workers=$3 worker_cpu=$4 labels=${5:-"{}"} min=${6:-}
  local autoscaling=false min_replicas=0
  [[ -n "$min" ]] && autoscaling=true min_replicas=$min
  kubectl -n "$NS" create -f - >/dev/null <<JSON
{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"$name","labels":$labels},
 "spec":{"rayVersion":"2.46.0","enableInTreeAutoscaling":$autoscaling,
  "headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head",
    "image":"sim/ray","resources":{"requests":{"cpu":"$head_cpu","memory":"2Gi"},
    "limits":{"cpu":"$head_cpu","memory":"2Gi"}}}]}}},
  "workerGroupSpecs":[{"groupName":"workers","replicas":$workers,"minReplicas":$min_replicas,
   "maxReplicas":16,"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-worker",
    "image":"sim/ray","resources":{"requests":{"cpu":"$worker_cpu","memory":"2Gi"},
    "limits":{"cpu":"$worker_cpu","memory":"2Gi"}}}]}}}]}}
JSON
}

# The label KubeRay puts on every pod of RayCluster NAME, and the PodGroup it creates for it.
ray_pods() { echo "ray.io/cluster=$1"; }
ray_pg() { echo "ray-$1-pg"; }
