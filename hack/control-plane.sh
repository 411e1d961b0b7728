#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager
# (optional), kube-scheduler (optional, for comparisons) and kwok simulating nodes and pods.
#
#   hack/control-plane.sh up   [--name NAME] [--nodes N] [--node-cpu C] [--node-memory M]
#                              [--node-pods P] [--no-kcm] [--kube-scheduler] [--node-lease S]
#   hack/control-plane.sh down [--name NAME]
#   hack/control-plane.sh env  [--name NAME]     # eval "$(hack/control-plane.sh env)"
#   hack/control-plane.sh add-nodes [--name NAME] --nodes N [--prefix P] [--node-cpu C] ...
#   hack/control-plane.sh stop  [--name NAME] [--kill] COMPONENT   # e.g. kube-apiserver
#   hack/control-plane.sh start [--name NAME] COMPONENT            # restart what stop stopped
#   hack/control-plane.sh compact [--name NAME]    # compact etcd to its current revision
#
# up --node-lease SECONDS (default 40) sets kwok's node lease, renewed every quarter of it, and
# kube-controller-manager's grace period to match: kwok renews every node's lease, so at
# thousands of nodes the default alone is hundreds of writes a second to the API server.
#
# up --uncached-watch RESOURCES (e.g. configmaps) serves those resources' watches from etcd
# rather than the apiserver's watch cache, so an etcd compaction forces 410 Gone on them.
#
# Each control plane lives in its own directory ($TEPHRA_CP_ROOT/NAME, default
# /tmp/tephra-cp/NAME) with its own free ports, so several can run at once. `down` stops exactly
# the processes `up` started (checked against their command lines) and removes the directory.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=control-plane; source "$root/hack/lib.sh"
cp_root=${TEPHRA_CP_ROOT:-${TMPDIR:-/tmp}/tephra-cp}
namespace=${TEPHRA_NAMESPACE:-tephra-system}

cmd=${1:-}
[[ -n "$cmd" ]] && shift
name=default nodes=0 node_lease=40 node_cpu=8 node_memory=32Gi node_pods=110 node_prefix=kwok-node
with_kcm=1 with_kube_scheduler=0 uncached_watch="" hard_kill=0 component=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --uncached-watch) uncached_watch=$2; shift 2 ;;
    --kill) hard_kill=1; shift ;;
    --name) name=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --node-lease) node_lease=$2; shift 2 ;;
    --node-cpu) node_cpu=$2; shift 2 ;;
    --node-memory) node_memory=$2; shift 2 ;;
    --node-pods) node_pods=$2; shift 2 ;;
    --prefix) node_prefix=$2; shift 2 ;;
    --no-kcm) with_kcm=0; shift ;;
    --kube-scheduler) with_kube_scheduler=1; shift ;;
    -*) echo "control-plane: unknown argument $1" >&2; exit 2 ;;
    *) component=$1; shift ;;
  esac
done
[[ "$node_lease" =~ ^[1-9][0-9]*$ ]] || { echo "control-plane: bad --node-lease '$node_lease'" >&2; exit 2; }
[[ "$name" =~ ^[a-zA-Z0-9._-]+$ ]] || { echo "control-plane: bad --name '$name'" >&2; exit 2; }
W="$cp_root/$name"

hack_prefix="control-plane[$name]"

free_ports() { python3 "$root/hack/free_ports.py" "$1"; }  # N distinct free TCP ports

wait_for() {  # wait_for SECONDS DESCRIPTION command...
  local deadline=$(( $(date +%s) + $1 )) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if (( $(date +%s) >= deadline )); then return 1; fi
    sleep 0.2
  done
}

# start NAME command...: runs the command in its own session with output in logs/NAME.log
# and records its pid; every command line contains $W so `down` can verify what it kills.
start() {
  local pname=$1; shift
  mkdir -p "$W/cmd"
  printf '%q ' "$@" >"$W/cmd/$pname"  # for `start COMPONENT` after a `stop`
  ( exec setsid "$@" >>"$W/logs/$pname.log" 2>&1 </dev/null ) &
  echo "$pname $!" >>"$W/pids"
}

ours() {  # ours PID: is PID a live process started for this control plane?
  [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' </proc/"$1"/cmdline | grep -qF -- "$W"
}

stop_component() {  # stop_component NAME SIGNAL
  local pname pid kept=()
  [[ -f "$W/pids" ]] || die "no control plane named '$name' is running"
  while read -r pname pid; do
    if [[ "$pname" == "$1" ]]; then
      if ours "$pid"; then
        kill "-$2" "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
      fi
    else
      kept+=("$pname $pid")
    fi
  done <"$W/pids"
  printf '%s\n' "${kept[@]}" >"$W/pids"
}

wait_healthy() {  # wait_healthy COMPONENT
  # shellcheck disable=SC1090
  source "$(env_file)"
  case "$1" in
    kube-apiserver)
      wait_for 90 kube-apiserver curl -sf --cacert "$TEPHRA_CA_FILE" "$TEPHRA_APISERVER/readyz" ||
        die "kube-apiserver not ready after 90s" ;;
    etcd) wait_for 30 etcd curl -sf "$TEPHRA_ETCD/health" || die "etcd not healthy after 30s" ;;
    *) sleep 1 ;;
  esac
}

show_logs() {
  for f in "$W"/logs/*.log; do
    [[ -f "$f" ]] || continue
    echo "----- tail of $f" >&2; tail -n 30 "$f" >&2
  done
}

stop_all() {
  [[ -f "$W/pids" ]] || return 0
  local pids=() line pname pid
  # Reverse start order: kwok and controllers before the apiserver, etcd last.
  while read -r pname pid; do pids=("$pid" "${pids[@]}"); done <"$W/pids"
  for pid in "${pids[@]}"; do
    if ours "$pid"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$W/pids"
}

make_pki() {
  local p="$W/pki"; mkdir -p "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=tephra-test-ca" \
    -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  sign "$p" apiserver "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  sign "$p" admin "/O=system:masters/CN=tephra-admin" clientAuth ""
  # Daemon identities look like the chart's ServiceAccounts, so the chart's RBAC applies to them.
  local id
  for id in controller-manager admission scheduler; do
    sign "$p" "$id" \
      "/O=system:serviceaccounts/O=system:serviceaccounts:$namespace/CN=system:serviceaccount:$namespace:tephra-$id" \
      clientAuth ""
  done
}

sign() {  # sign DIR NAME SUBJECT EKU SANS
  local p=$1 n=$2 subj=$3 eku=$4 sans=$5 ext="$1/$2.ext"
  openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$p/$n.key" -out "$p/$n.csr" 2>/dev/null
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"; [[ -n "$sans" ]] && echo "subjectAltName=$sans"; } >"$ext"
  openssl x509 -req -in "$p/$n.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$ext" -out "$p/$n.crt" 2>/dev/null
  rm -f "$p/$n.csr" "$ext"
}

write_kubeconfig() {  # write_kubeconfig IDENTITY
  local id=$1 b64="base64 -w0"
  cat >"$W/$id.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: tephra-$name
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $($b64 <"$W/pki/ca.crt")
users:
- name: $id
  user:
    client-certificate-data: $($b64 <"$W/pki/$id.crt")
    client-key-data: $($b64 <"$W/pki/$id.key")
contexts:
- name: $id@tephra-$name
  context: {cluster: tephra-$name, user: $id}
current-context: $id@tephra-$name
EOF
  chmod 600 "$W/$id.kubeconfig"
}

node_manifest() {  # node_manifest PREFIX COUNT START
  local prefix=$1 count=$2 first=$3 i
  echo '{"apiVersion":"v1","kind":"List","items":['
  for ((i = first; i < first + count; i++)); do
    (( i > first )) && echo ','
    cat <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$prefix-$i",
 "annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},
 "labels":{"kubernetes.io/hostname":"$prefix-$i","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","type":"kwok"}},
 "status":{"capacity":{"cpu":"$node_cpu","memory":"$node_memory","pods":"$node_pods"},
  "allocatable":{"cpu":"$node_cpu","memory":"$node_memory","pods":"$node_pods"}}}
EOF
  done
  echo ']}'
}

add_nodes() {  # add_nodes PREFIX COUNT
  local prefix=$1 count=$2 first
  (( count > 0 )) || return 0
  first=$(kubectl --kubeconfig="$W/admin.kubeconfig" get nodes -o name 2>/dev/null | grep -c "^node/$prefix-" || true)
  node_manifest "$prefix" "$count" "$first" | kubectl --kubeconfig="$W/admin.kubeconfig" create -f - >/dev/null
  kubectl --kubeconfig="$W/admin.kubeconfig" wait --for=condition=Ready node -l type=kwok \
    --timeout=120s >/dev/null || die "simulated nodes did not become Ready"
  log "$count simulated nodes $prefix-$first.. Ready"
}

env_file() { echo "$W/env"; }

up() {
  [[ -e "$W/pids" ]] && die "already running in $W (run: $0 down --name $name)"
  local t0; t0=$(date +%s.%N)
  local bin; bin=$("$root/hack/build-tools.sh")
  export PATH="$bin:$PATH"
  rm -rf "$W"; mkdir -p "$W/logs"
  # Whatever fails from here on, leave nothing behind.
  up_ok=0
  trap 'if (( ! up_ok )); then log "start failed"; show_logs; stop_all; rm -rf "$W"; fi' EXIT

  read -r etcd_port peer_port api_port kcm_port kwok_port ks_port <<<"$(free_ports 6)"
  make_pki

  start etcd etcd --name=tephra --data-dir="$W/etcd" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="tephra=http://127.0.0.1:$peer_port" --listen-metrics-urls="" \
    --unsafe-no-fsync --quota-backend-bytes=8589934592 --log-level=warn
  wait_for 30 etcd curl -sf "http://127.0.0.1:$etcd_port/health" || die "etcd not healthy after 30s"

  # No kubelets and no kube-proxy exist here: the advertise address is loopback, so the
  # endpoint reconciler is off; pods need no ServiceAccount token (no real containers).
  start kube-apiserver kube-apiserver --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --endpoint-reconciler-type=none --cert-dir="$W/pki" \
    --tls-cert-file="$W/pki/apiserver.crt" --tls-private-key-file="$W/pki/apiserver.key" \
    --client-ca-file="$W/pki/ca.crt" --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$W/pki/sa.pub" --service-account-signing-key-file="$W/pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins=ServiceAccount --profiling=false \
    ${uncached_watch:+--watch-cache-sizes=$(echo "$uncached_watch" | sed 's/\([^,]*\)/\1#0/g')} \
    ${TEPHRA_APISERVER_FLAGS:-}
  wait_for 90 kube-apiserver curl -sf --cacert "$W/pki/ca.crt" "https://127.0.0.1:$api_port/readyz" ||
    die "kube-apiserver not ready after 90s"

  write_kubeconfig admin
  local id; for id in controller-manager admission scheduler; do write_kubeconfig "$id"; done

  if (( with_kcm )); then
    local long_lease=""; (( node_lease > 40 )) && long_lease=1
    start kube-controller-manager kube-controller-manager --kubeconfig="$W/admin.kubeconfig" \
      --leader-elect=false --bind-address=127.0.0.1 --secure-port="$kcm_port" \
      --cert-dir="$W/kcm-certs" --root-ca-file="$W/pki/ca.crt" \
      --service-account-private-key-file="$W/pki/sa.key" --use-service-account-credentials=false \
      --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
      --authentication-skip-lookup=true --kube-api-qps=200 --kube-api-burst=400 \
      ${long_lease:+--node-monitor-grace-period=${node_lease}s}
    wait_for 60 kube-controller-manager curl -skf "https://127.0.0.1:$kcm_port/healthz" ||
    die "kube-controller-manager not healthy after 60s"
  fi
  if (( with_kube_scheduler )); then
    start kube-scheduler kube-scheduler --kubeconfig="$W/admin.kubeconfig" --leader-elect=false \
      --bind-address=127.0.0.1 --secure-port="$ks_port" --cert-dir="$W/ks-certs" \
      --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
      --authentication-skip-lookup=true
    wait_for 60 kube-scheduler curl -skf "https://127.0.0.1:$ks_port/healthz" ||
    die "kube-scheduler not healthy after 60s"
  fi

  start kwok kwok --kubeconfig="$W/admin.kubeconfig" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip=127.0.0.1 --node-port="$kwok_port" --server-address="127.0.0.1:$kwok_port" \
    --cidr=10.64.0.0/10 --node-lease-duration-seconds="$node_lease" --config="$root/hack/kwok/stages.yaml"
  wait_for 30 kwok curl -sf "http://127.0.0.1:$kwok_port/healthz" ||
    die "kwok not healthy after 30s"

  cat >"$(env_file)" <<EOF
export TEPHRA_CP_NAME=$name
export TEPHRA_CP_DIR=$W
export TEPHRA_APISERVER=https://127.0.0.1:$api_port
export TEPHRA_CA_FILE=$W/pki/ca.crt
export TEPHRA_NAMESPACE=$namespace
export TEPHRA_TOOLS_BIN=$bin
export KUBECONFIG=$W/admin.kubeconfig
export TEPHRA_KUBECONFIG_ADMIN=$W/admin.kubeconfig
export TEPHRA_KUBECONFIG_CONTROLLER_MANAGER=$W/controller-manager.kubeconfig
export TEPHRA_KUBECONFIG_ADMISSION=$W/admission.kubeconfig
export TEPHRA_KUBECONFIG_SCHEDULER=$W/scheduler.kubeconfig
export TEPHRA_ETCD=http://127.0.0.1:$etcd_port
export PATH=$bin:\$PATH
EOF
  add_nodes "$node_prefix" "$nodes"
  up_ok=1
  log "up in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")s:" \
    "apiserver https://127.0.0.1:$api_port, $nodes simulated nodes, work dir $W"
  cat "$(env_file)"
}

case "$cmd" in
  up) up ;;
  down)
    stop_all
    rm -rf "$W"
    log "down" ;;
  env)
    [[ -f "$(env_file)" ]] || die "no control plane named '$name' is running"
    cat "$(env_file)" ;;
  stop)
    [[ -n "$component" ]] || die "stop needs a component (etcd, kube-apiserver, kwok, ...)"
    if (( hard_kill )); then stop_component "$component" KILL; else stop_component "$component" TERM; fi
    log "stopped $component" ;;
  start)
    [[ -f "$W/cmd/$component" ]] || die "unknown component '$component'"
    grep -q "^$component " "$W/pids" && die "$component is already running"
    eval "start $component $(cat "$W/cmd/$component")"
    wait_healthy "$component"
    log "started $component" ;;
  compact)
    # shellcheck disable=SC1090
    source "$(env_file)"
    rev=$(curl -sf -X POST "$TEPHRA_ETCD/v3/kv/range" -d '{"key":"AA==","limit":1}' |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
    curl -sf -X POST "$TEPHRA_ETCD/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
    log "compacted etcd to revision $rev" ;;
  add-nodes)
    [[ -f "$(env_file)" ]] || die "no control plane named '$name' is running"
    # shellcheck disable=SC1090
    source "$(env_file)"
    add_nodes "$node_prefix" "$nodes" ;;
  *) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
