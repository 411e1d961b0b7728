#!/usr/bin/env bash
# The Spark operator is not served by the Go module proxy, so it cannot be built here. This test
# applies what it creates for a SparkApplication with spec.batchScheduler volcano, object for
# object (docs/integrations.md): a PodGroup spark-<app>-pg owned by the SparkApplication with
# minMember 1, minResources of the driver and all executors, the queue and priorityClassName of
# spec.batchSchedulerOptions; the driver pod in that group; then the executors, which the driver
# creates once it runs (owned by the driver pod). A minimal SparkApplication CRD stands in for the
# operator's, only so that the owner exists.
#
#   spark_podgroups_test.sh SOURCE_DIR BIN_DIR
SRC=$1 BIN=$2
source "$SRC/tests/e2e/operators/lib.sh"

spark_crd() {
  kubectl apply -f - >/dev/null <<'EOF'
{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"sparkapplications.sparkoperator.k8s.io",
  "annotations":{"api-approved.kubernetes.io":"unapproved, a stand-in in Tephra's tests"}},
 "spec":{"group":"sparkoperator.k8s.io","scope":"Namespaced",
  "names":{"kind":"SparkApplication","plural":"sparkapplications","singular":"sparkapplication"},
  "versions":[{"name":"v1beta2","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}
EOF
  eventually 60 kubectl wait --for=condition=Established crd/sparkapplications.sparkoperator.k8s.io --timeout=10s
}

# spark_app NAME EXECUTORS CPU_EACH [QUEUE]: the SparkApplication, its PodGroup and driver pod.
spark_app() {
  local app=$1 executors=$2 cpu=$3 queue=${4:-} uid total
  kubectl -n "$NS" create -f - >/dev/null <<EOF
{"apiVersion":"sparkoperator.k8s.io/v1beta2","kind":"SparkApplication","metadata":{"name":"$app"},
 "spec":{"type":"Scala","mode":"cluster","batchScheduler":"volcano",
  "batchSchedulerOptions":{${queue:+\"queue\":\"$queue\"}},
  "driver":{"cores":$cpu},"executor":{"cores":$cpu,"instances":$executors}}}
EOF
  uid=$(kubectl -n "$NS" get sparkapplication "$app" -o 'jsonpath={.metadata.uid}')
  total=$(( cpu * (executors + 1) ))
  kubectl -n "$NS" create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
  "metadata":{"name":"spark-$app-pg","ownerReferences":[{"apiVersion":"sparkoperator.k8s.io/v1beta2",
    "kind":"SparkApplication","name":"$app","uid":"$uid","controller":true,"blockOwnerDeletion":true}]},
  "spec":{"minMember":1,"minResources":{"cpu":"$total","memory":"$(( 2 * (executors + 1) ))Gi"}
   ${queue:+,\"queue\":\"$queue\"}}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"$app-driver",
   "labels":{"spark-role":"driver","sparkoperator.k8s.io/app-name":"$app","sparkoperator.k8s.io/launched-by-spark-operator":"true"},
   "annotations":{"scheduling.k8s.io/group-name":"spark-$app-pg"},
   "ownerReferences":[{"apiVersion":"sparkoperator.k8s.io/v1beta2","kind":"SparkApplication",
     "name":"$app","uid":"$uid","controller":true,"blockOwnerDeletion":true}]},
  "spec":{"schedulerName":"volcano","restartPolicy":"Never","containers":[{"name":"spark-kubernetes-driver",
    "image":"sim/spark","resources":{"requests":{"cpu":"$cpu","memory":"2Gi"}}}]}}]}
EOF
}

# spark_executors APP COUNT CPU: the executors the running driver creates.
spark_executors() {
  local app=$1 count=$2 cpu=$3 uid i items=""
  uid=$(kubectl -n "$NS" get pod "$app-driver" -o 'jsonpath={.metadata.uid}')
  for ((i = 1; i <= count; i++)); do
    items+="${items:+,}{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$app-exec-$i\",
      \"labels\":{\"spark-role\":\"executor\",\"sparkoperator.k8s.io/app-name\":\"$app\",\"spark-exec-id\":\"$i\"},
      \"annotations\":{\"scheduling.k8s.io/group-name\":\"spark-$app-pg\"},
      \"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"$app-driver\",\"uid\":\"$uid\",\"controller\":true}]},
      \"spec\":{\"schedulerName\":\"volcano\",\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"spark-kubernetes-executor\",
        \"image\":\"sim/spark\",\"resources\":{\"requests\":{\"cpu\":\"$cpu\",\"memory\":\"2Gi\"}}}]}}"
  done
  kubectl -n "$NS" create -f - >/dev/null <<<"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[$items]}"
}
app_pods() { echo "sparkoperator.k8s.io/app-name=$1"; }

# The PodGroup admits the application for all of minResources; the driver is bound alone
# (minMember 1), then the executors join the running group and are bound.
fit_spark() {
  spark_app pi 2 2
  eventually 60 bound_is "$(app_pods pi)" 1 || fail "the driver was not bound" || return 1
  eventually 30 pg_phase_is spark-pi-pg Running || fail "PodGroup phase $(pg '{.status.phase}' spark-pi-pg)" || return 1
  spark_executors pi 2 2
  eventually 60 bound_is "$(app_pods pi)" 3 || fail "$(pods_bound "$(app_pods pi)")/3 pods bound" || return 1
}

# minResources above what the cluster admits: the PodGroup stays Pending and the driver unbound.
unfit_spark() {
  spark_app wide 9 4
  expect_gang_held spark-wide-pg "$(app_pods wide)" || return 1
  pg_phase_is spark-wide-pg Pending || fail "PodGroup phase $(pg '{.status.phase}' spark-wide-pg)" || return 1
}

# batchSchedulerOptions.queue is copied into the PodGroup; a queue capped below minResources
# holds the application.
queue_spark() {
  queue spark-capped 2
  spark_app capped 1 2 spark-capped
  expect_gang_held spark-capped-pg "$(app_pods capped)" || return 1
  pg_condition spark-capped-pg Unschedulable | grep -q spark-capped ||
    fail "the condition does not name the queue: $(pg_condition spark-capped-pg Unschedulable)" || return 1
}

op_begin 4
spark_crd
op_case "fit: SparkApplication driver, then executors" fit_spark
op_case "unfit: minResources above the cluster" unfit_spark
op_case "queue: batchSchedulerOptions.queue" queue_spark
op_end
