#!/usr/bin/env bash
# The MPI operator v2 (hack/operators/mpi-operator, MPIJob kubeflow.org/v2beta1) with
# --gang-scheduling=volcano against Tephra on a control plane of its own: 4 nodes of 8 CPU. Its
# launcher is a batch/v1 Job, so kube-controller-manager creates the launcher pod.
#
# The operator always serves its health check on port 8080 of every interface and always runs
# leader election (a Lease in its --lock-namespace); the test is skipped when 8080 is taken.
#
#   mpi_operator_test.sh SOURCE_DIR BIN_DIR     (exit 77: the operator is not built)
SRC=$1 BIN=$2
source "$SRC/tests/e2e/operators/lib.sh"
op_dir mpi-operator >/dev/null
if ! python3 -c 'import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("", 8080))' 2>/dev/null; then
  say "SKIP: port 8080, which the MPI operator's health check always uses, is taken"; exit 77
fi

start_mpi_operator() {
  op_crds mpi-operator
  kubectl create namespace mpi-operator >/dev/null
  op_start_operator mpi-operator http://127.0.0.1:8080/healthz --gang-scheduling=volcano \
    --lock-namespace=mpi-operator --monitoring-port=0
}

# mpijob NAME WORKERS CPU POLICY: a v2beta1 MPIJob in NS; one 1-CPU launcher.
mpijob() {
  local name=$1 workers=$2 cpu=$3 policy=$4
  kubectl -n "$NS" create -f - >/dev/null <<JSON
{"apiVersion":"kubeflow.org/v2beta1","kind":"MPIJob","metadata":{"name":"$name"},
 "spec":{"slotsPerWorker":1,"runPolicy":{"schedulingPolicy":$policy},"mpiReplicaSpecs":{
  "Launcher":{"replicas":1,"template":{"spec":{"containers":[{"name":"launcher","image":"sim/mpi",
    "resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}},
  "Worker":{"replicas":$workers,"template":{"spec":{"containers":[{"name":"worker","image":"sim/mpi",
    "resources":{"requests":{"cpu":"$cpu","memory":"1Gi"}}}]}}}}}}
JSON
}
mpi_pods() { echo "training.kubeflow.org/job-name=$1"; }

# A launcher and three workers: one PodGroup with minMember 4, all four pods bound.
fit_mpijob() {
  mpijob mpi 3 2 '{}'
  eventually 90 bound_is "$(mpi_pods mpi)" 4 || fail "$(pods_bound "$(mpi_pods mpi)")/4 pods bound" || return 1
  pg_is '{.spec.minMember}' mpi 4 || fail "PodGroup minMember $(pg '{.spec.minMember}' mpi), want 4" || return 1
  eventually 30 pg_phase_is mpi Running || fail "PodGroup phase $(pg '{.status.phase}' mpi)" || return 1
}

# Five 6-CPU workers and a 1-CPU launcher: 31 of the cluster's 32 CPU, so the gang is admitted,
# but a node holds only one worker and there are four: nothing may be bound.
unfit_mpijob() {
  mpijob big 5 6 '{}'
  expect_created_and_held big "$(mpi_pods big)" 6 90
}

# schedulingPolicy.queue picks the queue; a queue capped below the gang holds it.
queue_mpijob() {
  queue mpi-capped 2
  mpijob capped 2 2 '{"queue":"mpi-capped"}'
  eventually 30 pg_is '{.spec.queue}' capped mpi-capped ||
    fail "PodGroup in queue '$(pg '{.spec.queue}' capped)'" || return 1
  expect_gang_held capped "$(mpi_pods capped)" || return 1
}

# schedulingPolicy.minAvailable 3 with five 8-CPU workers and the launcher: four of the six pods
# fit (a worker takes a whole node). Volcano binds four: the gang's minimum is met, the rest wait.
min_available_below_replicas() {
  mpijob elastic 5 8 '{"minAvailable":3}'
  eventually 30 pg_is '{.spec.minMember}' elastic 3 ||
    fail "PodGroup minMember $(pg '{.spec.minMember}' elastic), want 3" || return 1
  eventually 90 bound_is "$(mpi_pods elastic)" 4 || fail "$(pods_bound "$(mpi_pods elastic)")/6 pods bound, want 4" || return 1
  eventually 30 pg_phase_is elastic Running || fail "PodGroup phase $(pg '{.status.phase}' elastic)" || return 1
  stays 5 bound_is "$(mpi_pods elastic)" 4 || fail "$(pods_bound "$(mpi_pods elastic)") pods bound, want 4" || return 1
}

op_begin 4
start_mpi_operator
op_case "fit: MPIJob v2beta1" fit_mpijob
op_case "unfit: more pods than nodes can hold" unfit_mpijob
op_case "queue: schedulingPolicy.queue" queue_mpijob
op_case "minAvailable below replicas" min_available_below_replicas
op_end
