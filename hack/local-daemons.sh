#!/usr/bin/env bash
# Runs Tephra's three daemons as local processes next to a control plane of
# hack/control-plane.sh, as the chart installed in local mode describes them: the arguments come
# from the ConfigMap <release>-local, the scheduler configuration from <release>-scheduler, and
# each daemon authenticates as its chart ServiceAccount (the control plane's client certificate
# for system:serviceaccount:tephra-system:tephra-<daemon>), so it has exactly the chart's RBAC.
#
#   hack/local-daemons.sh start --name CP [--bin DIR] [--release tephra]   (restarts running ones)
#   hack/local-daemons.sh stop  --name CP
#   hack/local-daemons.sh status --name CP
#   --only scheduler,controller-manager   start/stop only these (the others keep running)
#
# Logs: <control plane dir>/logs/tephra-<daemon>.log. The processes are recorded in
# <control plane dir>/tephra-pids; stop ends exactly those (checked against their command lines).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=local-daemons; source "$root/hack/lib.sh"

cmd=${1:-}; [[ -n "$cmd" ]] && shift
name=default bin="$root/build/dev/bin" release=tephra only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --release) release=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "local-daemons: unknown argument $1" >&2; exit 2 ;;
  esac
done
hack_prefix="local-daemons[$name]"

cp_env=$("$root/hack/control-plane.sh" env --name "$name") || exit 1
eval "$cp_env"
W=$TEPHRA_CP_DIR
ns=$TEPHRA_NAMESPACE
pids="$W/tephra-pids"
daemons=(admission controller-manager scheduler)  # the webhook first: its hooks fail closed
if [[ -n "$only" ]]; then
  chosen=()
  for d in "${daemons[@]}"; do
    if [[ ",$only," == *",$d,"* ]]; then chosen+=("$d"); fi
  done
  [[ ${#chosen[@]} -gt 0 ]] || die "--only $only names none of: ${daemons[*]}"
  daemons=("${chosen[@]}")
fi
selected() { [[ " ${daemons[*]} " == *" $1 "* ]]; }

ours() {  # ours PID: a live process started by this script for this control plane
  [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$W/"
}

stop() {  # the selected daemons, together; the others stay recorded
  [[ -f "$pids" ]] || return 0
  local d pid kept=() stopping=()
  while read -r d pid; do
    if ! selected "$d"; then kept+=("$d $pid"); continue; fi
    ours "$pid" || continue
    kill -TERM "$pid" 2>/dev/null || true
    stopping+=("$d $pid")
  done <"$pids"
  for entry in "${stopping[@]}"; do
    read -r d pid <<<"$entry"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    log "stopped tephra-$d ($pid)"
  done
  if [[ ${#kept[@]} -gt 0 ]]; then printf '%s\n' "${kept[@]}" >"$pids"; else rm -f "$pids"; fi
}

# data KEY: one entry of the local-mode ConfigMap; empty when the daemon is disabled.
data() { jq -r --arg k "$1" '.data[$k] // ""' <<<"$local_cm"; }

# True once tephra-admission has written its CA into every webhook of the release: until then
# the API server cannot call it, and the hooks fail closed.
ca_bundles_written() {
  local selector="app.kubernetes.io/instance=$release,app.kubernetes.io/component=admission"
  kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -l "$selector" -o json |
    jq -e '[.items[].webhooks[] | .clientConfig.caBundle // ""] | all(. != "")' >/dev/null
}

start_one() {  # start_one DAEMON
  local d=$1 args sa url
  args=$(data "$d.args")
  if [[ -z "$args" ]]; then log "tephra-$d is disabled in the chart"; return 0; fi
  sa=$(data "$d.serviceAccount")
  # The control plane only has certificates for these names, so any other would not be the
  # chart's identity.
  [[ "$sa" == "tephra-$d" ]] ||
    die "the chart's ServiceAccount is $ns/$sa, but the control plane's identity is $ns/tephra-$d: install the chart as release 'tephra' in namespace $ns"
  local argv=()
  mapfile -t argv < <(jq -r '.[]' <<<"$args")
  if [[ "$d" == scheduler ]]; then
    mkdir -p "$W/tephra"
    kubectl -n "$ns" get configmap "$(data scheduler.configMap)" \
      -o 'go-template={{index .data "volcano-scheduler.conf"}}' >"$W/tephra/volcano-scheduler.conf"
    argv+=("--scheduler-conf=$W/tephra/volcano-scheduler.conf")
  fi
  local kubeconfig_var="TEPHRA_KUBECONFIG_$(tr a-z- A-Z_ <<<"$d")"
  [[ -x "$bin/tephra-$d" ]] || die "$bin/tephra-$d is missing (build with: cmake --build --preset dev)"
  ( exec setsid "$bin/tephra-$d" "--kubeconfig=${!kubeconfig_var}" "${argv[@]}" \
      >>"$W/logs/tephra-$d.log" 2>&1 </dev/null ) &
  echo "$d $!" >>"$pids"
  url=$(data "$d.healthz")
  for _ in $(seq 300); do
    if curl -sf "$url/readyz" >/dev/null 2>&1 && { [[ "$d" != admission ]] || ca_bundles_written; }; then
      log "tephra-$d ready ($url, log $W/logs/tephra-$d.log)"; return 0
    fi
    kill -0 "$!" 2>/dev/null || break
    sleep 0.2
  done
  tail -n 30 "$W/logs/tephra-$d.log" >&2
  die "tephra-$d did not become ready at $url/readyz (log above: $W/logs/tephra-$d.log)"
}

case "$cmd" in
  start)
    local_cm=$(kubectl -n "$ns" get configmap "$release-local" -o json) ||
      die "no ConfigMap $ns/$release-local: install the chart with charts/tephra/values-local.yaml first"
    stop
    for d in "${daemons[@]}"; do start_one "$d"; done ;;
  stop) stop ;;
  status)
    [[ -f "$pids" ]] || { log "no daemons"; exit 1; }
    while read -r d pid; do
      if ours "$pid"; then echo "tephra-$d running ($pid)"; else echo "tephra-$d not running"; fi
    done <"$pids" ;;
  *) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
