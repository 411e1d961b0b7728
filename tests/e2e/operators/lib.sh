# Shared by the operator e2e tests (sourced, not run): a control plane of the test's own with
# Tephra installed as a user installs it (the chart in local mode, the three daemons with the
# chart's identities, the scheduler's admin API on), real operators as local processes, and
# checks on what Tephra shows. See README.md in this folder.
#
# A test sources this file with SRC (the source tree) and BIN (Tephra's bin directory) set, calls
# op_begin, runs cases with op_case, and ends with op_end, which prints "N passed, N failed".

set -euo pipefail
: "${SRC:?}" "${BIN:?}"
cd "$SRC"

op_test=${op_test:-$(basename "$0" .sh)}
op_name="op-${op_test//_/-}-$$"
op_pids=()         # operator processes started by op_start_operator
op_queues=()       # queues of the current case
op_passed=0 op_failed=0
op_case_name=""

say() { echo "[$op_test] $*"; }

# The operator NAME's build directory (hack/build-operators.sh), or exit 77 (CTest: skipped)
# when it is not built: the default run builds only some operators (hack/test.sh).
op_dir() {
  local dir
  dir=$(hack/build-operators.sh --dir "$1")
  if [[ ! -x "$dir/bin/$1" ]]; then
    say "SKIP: operator $1 is not built (hack/build-operators.sh $1, or hack/test.sh -L operators)" >&2
    exit 77
  fi
  echo "$dir"
}

op_cleanup() {
  local pid
  for pid in "${op_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${op_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [[ -n "${TEPHRA_KEEP_CONTROL_PLANE:-}" ]]; then say "kept control plane $op_name"; return; fi
  hack/local-daemons.sh stop --name "$op_name" >/dev/null 2>&1 || true
  hack/control-plane.sh down --name "$op_name" >/dev/null 2>&1 || true
}

# Tails of the daemons' and operators' logs, for a failure (without the scheduler's line per
# cycle and the operators' health checks).
op_logs() {
  local f
  for f in "$TEPHRA_CP_DIR"/logs/tephra-*.log "$TEPHRA_CP_DIR"/logs/operator-*.log; do
    [[ -f "$f" ]] || continue
    echo "----- tail of $f"
    grep -v -e 'scheduler: cycle' -e healthz "$f" | tail -n 20
  done
}

free_ports() { python3 hack/free_ports.py "$1"; }  # N distinct free TCP ports

# eventually SECONDS command...: polls every half second until the command succeeds.
eventually() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s) < deadline )) || return 1
    sleep 0.5
  done
}

# stays SECONDS command...: the command succeeds at every poll for that long (a state that must
# not change, e.g. nothing bound while a gang cannot fit).
stays() {
  local deadline=$(( $(date +%s) + $1 )); shift
  while (( $(date +%s) < deadline )); do
    "$@" >/dev/null 2>&1 || return 1
    sleep 0.5
  done
}

# op_begin NODES: a control plane with NODES simulated nodes of 8 CPU, 32 GiB and 100 GiB of
# ephemeral storage, the chart in local mode with the scheduler's admin API on 127.0.0.1
# (exported as TEPHRA_ADMIN_ADDRESS for tephractl), and the daemons running.
op_begin() {
  trap op_cleanup EXIT
  say "starting control plane $op_name with $1 nodes"
  hack/control-plane.sh up --name "$op_name" --nodes "$1" --node-cpu 8 --node-memory 32Gi >/dev/null
  eval "$(hack/control-plane.sh env --name "$op_name")"
  # Real nodes report ephemeral storage, and some operators request it (the training-operator's
  # MPIJob launcher asks for 5Gi); hack/control-plane.sh's nodes have none.
  local node
  for node in $(kubectl get nodes -o name); do
    kubectl patch "$node" --subresource=status --type=merge >/dev/null \
      -p '{"status":{"capacity":{"ephemeral-storage":"100Gi"},"allocatable":{"ephemeral-storage":"100Gi"}}}'
  done
  local p1 p2 p3 p4 p5 conf=()
  read -r p1 p2 p3 p4 p5 <<<"$(free_ports 5)"
  export TEPHRA_ADMIN_ADDRESS=127.0.0.1:$p5
  # TEPHRA_OPERATORS_SCHEDULER_CONF: run under another volcano-scheduler.conf than the chart's.
  [[ -n "${TEPHRA_OPERATORS_SCHEDULER_CONF:-}" ]] &&
    conf=(--set-file "scheduler.conf=$TEPHRA_OPERATORS_SCHEDULER_CONF")
  helm install tephra charts/tephra --namespace "$TEPHRA_NAMESPACE" --create-namespace \
    -f charts/tephra/values-local.yaml --set "admission.port=$p1" --set "admission.healthzPort=$p2" \
    --set "controllerManager.healthzPort=$p3" --set "scheduler.metricsPort=$p4" \
    --set-json "scheduler.extraArgs=[\"--admin-address=$TEPHRA_ADMIN_ADDRESS\"]" "${conf[@]}" \
    >/dev/null 2> >(grep -v 'found symbolic link in path' >&2)
  hack/local-daemons.sh start --name "$op_name" --bin "$BIN" 2>/dev/null ||
    { op_logs; say "FAIL: Tephra's daemons did not start"; exit 1; }
  export PATH="$BIN:$PATH"
}

# op_crds NAME: the operator's CRDs from its build directory, Established when this returns.
# Server-side apply: some of these CRDs are larger than client-side apply's annotation allows.
# kubectl wait fails outright on a CRD that has no conditions yet, hence the retries.
op_crds() {
  local dir; dir=$(op_dir "$1")
  kubectl apply --server-side --force-conflicts -f "$dir/crds/" >/dev/null
  eventually 60 kubectl wait --for=condition=Established -f "$dir/crds/" --timeout=10s ||
    { say "FAIL: the CRDs of $1 were not established"; exit 1; }
}

# op_start_operator NAME HEALTH_URL ARGS...: the operator as a local process with the admin
# kubeconfig, log in logs/operator-NAME.log, ready when HEALTH_URL answers.
op_start_operator() {
  local name=$1 url=$2; shift 2
  op_launch_operator "$name" "$@"
  op_wait_operator "$name" "$url"
}
op_launch_operator() {  # op_launch_operator NAME ARGS...
  local name=$1 dir; shift
  dir=$(op_dir "$name")
  ( exec setsid env KUBECONFIG="$TEPHRA_KUBECONFIG_ADMIN" "$dir/bin/$name" "$@" \
      >>"$TEPHRA_CP_DIR/logs/operator-$name.log" 2>&1 </dev/null ) &
  op_pids+=("$!")
}
op_wait_operator() {  # op_wait_operator NAME HEALTH_URL
  if ! eventually 60 curl -sf "$2"; then
    grep -v healthz "$TEPHRA_CP_DIR/logs/operator-$1.log" | tail -n 30
    say "FAIL: operator $1 did not become ready at $2"; exit 1
  fi
  say "operator $1 running (log $TEPHRA_CP_DIR/logs/operator-$1.log)"
}

# op_case NAME FUNCTION: runs one case in a namespace of its own (exported as NS, deleted
# afterwards, waiting until it is gone so the next case finds the cluster empty). A case function
# returns non-zero with `fail MESSAGE`.
op_case() {
  local name=$1 fn=$2 rc=0
  op_case_name=$name
  export NS="c-$(tr 'A-Z_ ' 'a-z--' <<<"$name" | tr -cd 'a-z0-9-' | cut -c1-40)"
  kubectl create namespace "$NS" >/dev/null
  say "---- $name"
  "$fn" || rc=$?
  if (( rc == 0 )); then
    say "PASS $name"; op_passed=$((op_passed + 1))
  else
    say "FAIL $name"; op_failed=$((op_failed + 1)); op_logs
  fi
  if (( ${#op_queues[@]} > 0 )); then
    kubectl delete queue "${op_queues[@]}" --wait=false >/dev/null 2>&1 || true
    op_queues=()
  fi
  # Gone entirely, PodGroups included: an admitted PodGroup holds its minResources in its queue.
  kubectl delete namespace "$NS" --wait=false >/dev/null
  kubectl wait --for=delete "namespace/$NS" --timeout=120s >/dev/null 2>&1 ||
    say "warning: namespace $NS still exists after 120s"
}

# op_end: the summary line CTest's log keeps; non-zero when a case failed.
op_end() {
  echo "$op_passed passed, $op_failed failed"
  (( op_failed == 0 ))
}

fail() { say "  $op_case_name: $*"; return 1; }

# queue NAME [CPU_CAPABILITY]: a Queue of weight 1, capped at that much CPU when given; deleted
# at the end of the case (queues are cluster-wide).
queue() {
  local spec='{"weight":1}'
  [[ -n "${2:-}" ]] && spec="{\"weight\":1,\"capability\":{\"cpu\":\"$2\"}}"
  kubectl apply -f - >/dev/null <<<"{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",
    \"metadata\":{\"name\":\"$1\"},\"spec\":$spec}"
  op_queues+=("$1")
}

# ---- what Tephra shows

# pods_bound SELECTOR: the number of pods in NS matching SELECTOR that have a node.
pods_bound() {
  kubectl -n "$NS" get pods -l "$1" -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    grep -c . || true
}
pods_total() { kubectl -n "$NS" get pods -l "$1" -o name | grep -c . || true; }
bound_is() { [[ "$(pods_bound "$1")" == "$2" ]]; }
total_is() { [[ "$(pods_total "$1")" == "$2" ]]; }
# pg FIELD NAME: a jsonpath of PodGroup NAME in NS.
pg() { kubectl -n "$NS" get podgroup "$2" -o "jsonpath=$1" 2>/dev/null; }
pg_phase_is() { [[ "$(pg '{.status.phase}' "$1")" == "$2" ]]; }
# pg_is JSONPATH NAME VALUE: the PodGroup's field has that value.
pg_is() { [[ "$(pg "$1" "$2")" == "$3" ]]; }
# pg_condition NAME TYPE: "status reason message" of the PodGroup's condition TYPE.
pg_condition() {
  pg "{range .status.conditions[?(@.type==\"$2\")]}{.status} {.reason} {.message}{end}" "$1"
}
pg_unschedulable() { [[ "$(pg_condition "$1" Unschedulable)" == True* ]]; }
# pg_events NAME: "reason: message" of every event about PodGroup NAME in NS.
pg_events() {
  kubectl -n "$NS" get events --field-selector "involvedObject.kind=PodGroup,involvedObject.name=$1" \
    -o 'jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}'
}
pg_has_event() { pg_events "$1" | grep -q "$2"; }
# pods_have_event SELECTOR REASON: some pod matching SELECTOR has an event REASON.
pods_have_event() {
  local p
  for p in $(kubectl -n "$NS" get pods -l "$1" -o 'jsonpath={.items[*].metadata.name}'); do
    kubectl -n "$NS" get events --field-selector "involvedObject.kind=Pod,involvedObject.name=$p,reason=$2" \
      -o name | grep -q . && return 0
  done
  return 1
}

# expect_created_and_held GROUP SELECTOR COUNT SECONDS: the unfit case every operator test has:
# the operator creates COUNT pods within SECONDS, and the
# gang is held (expect_gang_held) because they do not fit together.
expect_created_and_held() {
  local group=$1 selector=$2 count=$3 seconds=$4
  eventually "$seconds" total_is "$selector" "$count" ||
    fail "$(pods_total "$selector")/$count pods created" || return 1
  expect_gang_held "$group" "$selector"
}

# expect_gang_held NAME SELECTOR: the gang waits whole, and Tephra says why: no pod bound (for
# 10 s after the condition appears), the Unschedulable condition, an event on the PodGroup, a
# FailedScheduling event on its pods once it is admitted, and `tephractl job explain --pod-group`
# with the admin API's explanation.
expect_gang_held() {
  local group=$1 selector=$2 explain
  eventually 60 pg_unschedulable "$group" ||
    fail "PodGroup $group has no Unschedulable=True condition: '$(pg_condition "$group" Unschedulable)'" || return 1
  stays 10 bound_is "$selector" 0 || fail "$(pods_bound "$selector") pods of the held gang were bound" || return 1
  say "  condition: $(pg_condition "$group" Unschedulable)"
  eventually 30 pg_has_event "$group" Unschedulable ||
    fail "no Unschedulable event on PodGroup $group: $(pg_events "$group")" || return 1
  say "  events: $(pg_events "$group" | sort -u | head -3 | tr '\n' '|')"
  if [[ "$(pods_total "$selector")" != 0 ]] && pg_phase_is "$group" Inqueue; then
    eventually 30 pods_have_event "$selector" FailedScheduling ||
      fail "no FailedScheduling event on the gang's pending pods" || return 1
  fi
  explain=$(tephractl -n "$NS" job explain "$group" --pod-group 2>&1) ||
    fail "tephractl job explain --pod-group $group failed: $explain" || return 1
  grep -q "^Summary:" <<<"$explain" || fail "no scheduler explanation: $explain" || return 1
  say "  explain: $(grep -E '^(Phase|Summary):' <<<"$explain" | tr '\n' ' ')"
}
