#!/usr/bin/env bash
# The Kubeflow training-operator (hack/operators/training-operator) with
# --gang-scheduler-name=volcano against Tephra on a control plane of its own: 4 nodes of 8 CPU.
#
#   training_operator_test.sh SOURCE_DIR BIN_DIR     (exit 77: the operator is not built)
SRC=$1 BIN=$2
source "$SRC/tests/e2e/operators/lib.sh"
source "$SRC/tests/e2e/operators/training_operator.sh"
op_dir training-operator >/dev/null

# One PodGroup per job, minMember = all replicas, every pod bound; the job then runs to Succeeded
# (the master's pod succeeds after 20 s, hack/kwok/stages.yaml).
fit_pytorchjob() {
  ANNOTATIONS='{"sim.tephra.dev/result":"Succeeded","sim.tephra.dev/duration":"20s"}' \
    kubeflow_job PyTorchJob train '{}' Master:1:2 Worker:3:2
  eventually 60 bound_is "$(job_pods train)" 4 || fail "$(pods_bound "$(job_pods train)")/4 pods bound" || return 1
  [[ "$(pg '{.spec.minMember}/{.spec.queue}' train)" == 4/default ]] ||
    fail "PodGroup minMember/queue $(pg '{.spec.minMember}/{.spec.queue}' train), want 4/default" || return 1
  eventually 30 pg_phase_is train Running || fail "PodGroup phase $(pg '{.status.phase}' train)" || return 1
  succeeded() {
    [[ "$(kubectl -n "$NS" get pytorchjob train -o 'jsonpath={.status.conditions[?(@.type=="Succeeded")].status}')" == True ]]
  }
  eventually 90 succeeded || fail "the PyTorchJob did not succeed" || return 1
}

# The other job kinds of the same operator: each one gang of three, bound whole.
fit_kind() {  # fit_kind KIND REPLICA REPLICA
  kubeflow_job "$1" job '{}' "$2" "$3"
  eventually 60 bound_is "$(job_pods job)" 3 || fail "$1: $(pods_bound "$(job_pods job)")/3 pods bound" || return 1
  [[ "$(pg '{.spec.minMember}' job)" == 3 ]] || fail "$1: PodGroup minMember $(pg '{.spec.minMember}' job)" || return 1
}
fit_tfjob() { fit_kind TFJob PS:1:1 Worker:2:1; }
fit_xgboostjob() { fit_kind XGBoostJob Master:1:1 Worker:2:1; }
fit_mpijob_v1() { fit_kind MPIJob Launcher:1:1 Worker:2:1; }

# Five 6-CPU pods: 30 of the cluster's 32 CPU, so the gang is admitted and its pods are created,
# but a node holds only one of them and there are four: none may be bound.
unfit_count() {
  kubeflow_job PyTorchJob big '{}' Master:1:6 Worker:4:6
  expect_created_and_held big "$(job_pods big)" 5 60
}

# Five 8-CPU pods: 40 CPU is more than the cluster has; the PodGroup is not admitted (it stays
# Pending) and the operator creates no pod until it is.
unfit_size() {
  kubeflow_job PyTorchJob huge '{}' Master:1:8 Worker:4:8
  expect_gang_held huge "$(job_pods huge)"
  pg_phase_is huge Pending || fail "PodGroup phase $(pg '{.status.phase}' huge), want Pending" || return 1
}

# spec.runPolicy.schedulingPolicy.queue picks the queue, and the queue's limits apply: the job in
# team-a runs, the one in a queue capped at 2 CPU waits.
queue_from_scheduling_policy() {
  queue team-a
  queue team-capped 2
  kubeflow_job PyTorchJob in-a '{"queue":"team-a"}' Master:1:1 Worker:1:1
  kubeflow_job PyTorchJob in-capped '{"queue":"team-capped"}' Master:1:2 Worker:1:2
  eventually 60 bound_is "$(job_pods in-a)" 2 || fail "$(pods_bound "$(job_pods in-a)")/2 pods of in-a bound" || return 1
  eventually 30 pg_is '{.spec.queue}' in-a team-a || fail "PodGroup in-a in queue '$(pg '{.spec.queue}' in-a)'" || return 1
  eventually 30 pg_is '{.spec.queue}' in-capped team-capped || fail "PodGroup in-capped in queue '$(pg '{.spec.queue}' in-capped)'" || return 1
  expect_gang_held in-capped "$(job_pods in-capped)" || return 1
  pg_condition in-capped Unschedulable | grep -q team-capped ||
    fail "the condition does not name the queue: $(pg_condition in-capped Unschedulable)" || return 1
}

# schedulingPolicy.minAvailable 3 of 6 replicas of 8 CPU: four fit (one a node). Volcano binds
# the four: the gang's minimum is met, the rest wait.
min_available_below_replicas() {
  kubeflow_job PyTorchJob elastic '{"minAvailable":3}' Master:1:8 Worker:5:8
  eventually 30 pg_is '{.spec.minMember}' elastic 3 ||
    fail "PodGroup minMember $(pg '{.spec.minMember}' elastic), want 3" || return 1
  eventually 60 bound_is "$(job_pods elastic)" 4 || fail "$(pods_bound "$(job_pods elastic)")/6 pods bound, want 4" || return 1
  eventually 30 pg_phase_is elastic Running || fail "PodGroup phase $(pg '{.status.phase}' elastic)" || return 1
  stays 5 bound_is "$(job_pods elastic)" 4 || fail "$(pods_bound "$(job_pods elastic)") pods bound, want 4" || return 1
}

op_begin 4
start_training_operator
op_case "fit: PyTorchJob" fit_pytorchjob
op_case "fit: TFJob" fit_tfjob
op_case "fit: XGBoostJob" fit_xgboostjob
op_case "fit: MPIJob v1" fit_mpijob_v1
op_case "unfit: more pods than nodes can hold" unfit_count
op_case "unfit: more than the cluster admits" unfit_size
op_case "queue: schedulingPolicy.queue" queue_from_scheduling_policy
op_case "minAvailable below replicas" min_available_below_replicas
op_end
