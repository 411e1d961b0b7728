#!/usr/bin/env bash
# KubeRay's ray-operator (hack/operators/kuberay) with --batch-scheduler=volcano against Tephra
# on a control plane of its own: 4 nodes of 8 CPU.
#
#   kuberay_test.sh SOURCE_DIR BIN_DIR     (exit 77: the operator is not built)
SRC=$1 BIN=$2
source "$SRC/tests/e2e/operators/lib.sh"
source "$SRC/tests/e2e/operators/kuberay.sh"
op_dir kuberay >/dev/null

# A head and three workers: one PodGroup ray-<name>-pg with minMember 4, every pod bound.
fit_raycluster() {
  raycluster ray 1 3 2
  eventually 60 bound_is "$(ray_pods ray)" 4 || fail "$(pods_bound "$(ray_pods ray)")/4 pods bound" || return 1
  pg_is '{.spec.minMember}' "$(ray_pg ray)" 4 || fail "PodGroup minMember $(pg '{.spec.minMember}' "$(ray_pg ray)")" || return 1
  eventually 30 pg_phase_is "$(ray_pg ray)" Running || fail "PodGroup phase $(pg '{.status.phase}' "$(ray_pg ray)")" || return 1
}

# A 4-CPU head and four 7-CPU workers: 32 CPU is admitted, but no node holds the head beside a
# worker, so five nodes are needed and four exist: nothing may be bound.
unfit_raycluster() {
  raycluster big 4 4 7
  expect_created_and_held "$(ray_pg big)" "$(ray_pods big)" 5 60
}

# Scaling the worker group from 2 to 4: KubeRay raises the PodGroup's minMember and minResources,
# and Tephra binds the new workers.
scale_up_raycluster() {
  raycluster grow 1 2 2
  eventually 60 bound_is "$(ray_pods grow)" 3 || fail "$(pods_bound "$(ray_pods grow)")/3 pods bound" || return 1
  kubectl -n "$NS" patch raycluster grow --type=json \
    -p '[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":4}]' >/dev/null
  eventually 30 pg_is '{.spec.minMember}/{.spec.minResources.cpu}' "$(ray_pg grow)" 5/9 ||
    fail "PodGroup minMember/cpu $(pg '{.spec.minMember}/{.spec.minResources.cpu}' "$(ray_pg grow)"), want 5/9" || return 1
  eventually 60 bound_is "$(ray_pods grow)" 5 || fail "$(pods_bound "$(ray_pods grow)")/5 pods bound after scaling up" || return 1
}

# The RayCluster's volcano.sh/queue-name label picks the queue, and the queue's limits apply.
queue_from_label() {
  queue ray-a
  queue ray-capped 2
  raycluster in-a 1 1 1 '{"volcano.sh/queue-name":"ray-a"}'
  raycluster in-capped 1 1 2 '{"volcano.sh/queue-name":"ray-capped"}'
  eventually 60 bound_is "$(ray_pods in-a)" 2 || fail "$(pods_bound "$(ray_pods in-a)")/2 pods of in-a bound" || return 1
  eventually 30 pg_is '{.spec.queue}' "$(ray_pg in-a)" ray-a ||
    fail "PodGroup of in-a in queue '$(pg '{.spec.queue}' "$(ray_pg in-a)")'" || return 1
  eventually 30 pg_is '{.spec.queue}' "$(ray_pg in-capped)" ray-capped ||
    fail "PodGroup of in-capped in queue '$(pg '{.spec.queue}' "$(ray_pg in-capped)")'" || return 1
  expect_gang_held "$(ray_pg in-capped)" "$(ray_pods in-capped)" || return 1
  pg_condition "$(ray_pg in-capped)" Unschedulable | grep -q ray-capped ||
    fail "the condition does not name the queue: $(pg_condition "$(ray_pg in-capped)" Unschedulable)" || return 1
}

# Autoscaling with minReplicas 1 and four 8-CPU workers: KubeRay sets minMember to 2 (head + 1)
# and creates all five pods; the head and three workers fit (one worker a node). Volcano binds
# those four: the gang's minimum is met, the fifth waits.
min_member_below_replicas() {
  raycluster elastic 4 4 8 '{}' 1
  eventually 30 pg_is '{.spec.minMember}' "$(ray_pg elastic)" 2 ||
    fail "PodGroup minMember $(pg '{.spec.minMember}' "$(ray_pg elastic)"), want 2" || return 1
  eventually 60 bound_is "$(ray_pods elastic)" 4 || fail "$(pods_bound "$(ray_pods elastic)")/5 pods bound, want 4" || return 1
  eventually 30 pg_phase_is "$(ray_pg elastic)" Running || fail "PodGroup phase $(pg '{.status.phase}' "$(ray_pg elastic)")" || return 1
  stays 5 bound_is "$(ray_pods elastic)" 4 || fail "$(pods_bound "$(ray_pods elastic)") pods bound, want 4" || return 1
}

op_begin 4
start_kuberay
op_case "fit: RayCluster" fit_raycluster
op_case "unfit: more pods than nodes can hold" unfit_raycluster
op_case "scale-up: RayCluster workers 2 to 4" scale_up_raycluster
op_case "queue: volcano.sh/queue-name label" queue_from_label
op_case "minMember below replicas (autoscaling)" min_member_below_replicas
op_end
