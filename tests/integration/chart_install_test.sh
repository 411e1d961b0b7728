#!/usr/bin/env bash
# `helm install` of charts/tephra on a real control plane, then the three daemons as local
# processes with the chart's identities (hack/local-daemons.sh): every rendered object exists,
# the webhooks are live, a gang job runs to Completed, no daemon was refused anything (a missing
# RBAC rule shows as Forbidden in its log and fails the test), and `helm uninstall` removes every
# object of the release but keeps the CRDs and the default Queue.
#
# The chart's ClusterRoles, Leases and cluster-wide webhooks would collide with the other tests'
# daemons, so this test starts a control plane of its own.
#
#   chart_install_test.sh SOURCE_DIR BIN_DIR     (TEPHRA_KEEP_CONTROL_PLANE=1: leave it up)
set -euo pipefail
src=$1 bin=$2
name=chart-it-$$
ns=tephra-system
cd "$src"

say() { echo "chart_install_test: $*"; }
fail() {
  say "FAIL: $*"
  for f in "$TEPHRA_CP_DIR"/logs/tephra-*.log; do
    [[ -f "$f" ]] && { echo "----- tail of $f"; tail -n 25 "$f"; }
  done
  exit 1
}
cleanup() {
  if [[ -n "${TEPHRA_KEEP_CONTROL_PLANE:-}" ]]; then say "kept control plane $name"; return; fi
  hack/local-daemons.sh stop --name "$name" >/dev/null 2>&1 || true
  hack/control-plane.sh down --name "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT
# shellcheck source=chart_checks.sh
source tests/integration/chart_checks.sh

say "starting control plane $name"
hack/control-plane.sh up --name "$name" --nodes 2 --node-cpu 8 --node-memory 32Gi >/dev/null
eval "$(hack/control-plane.sh env --name "$name")"

read -r p1 p2 p3 p4 <<<"$(python3 hack/free_ports.py 4)"
values=(-f charts/tephra/values-local.yaml --set "admission.port=$p1" --set "admission.healthzPort=$p2"
        --set "controllerManager.healthzPort=$p3" --set "scheduler.metricsPort=$p4")
# A server-side dry run works before the CRDs exist (the default Queue's lookup is skipped).
helm_ install tephra charts/tephra --namespace "$ns" --create-namespace --dry-run=server \
  "${values[@]}" >/dev/null || fail "helm install --dry-run=server failed"
say "helm install (local mode, webhook on 127.0.0.1:$p1)"
helm_ install tephra charts/tephra --namespace "$ns" --create-namespace "${values[@]}" >/dev/null ||
  fail "helm install failed"

# Every object of the release exists (kubectl get -f fails on the first one missing).
manifest=$TEPHRA_CP_DIR/release-manifest.yaml
helm_ get manifest tephra -n "$ns" >"$manifest"
objects=$(kubectl get -f "$manifest" -o name) || fail "objects of the release are missing"
count=$(wc -l <<<"$objects")
want=$(grep -c '^# Source:' "$manifest")  # helm heads each rendered object with its template
(( count == want && count > 20 )) || fail "$count objects of the release exist, want $want: $objects"
say "$count objects of the release exist"
for crd in jobs.batch.volcano.sh queues.scheduling.volcano.sh podgroups.scheduling.volcano.sh \
           commands.bus.volcano.sh hypernodes.topology.volcano.sh; do
  kubectl wait --for=condition=Established "crd/$crd" --timeout=30s >/dev/null ||
    fail "CRD $crd not established"
done
kubectl get queue default >/dev/null || fail "the default Queue was not created"

say "starting the daemons with the chart's identities"
hack/local-daemons.sh start --name "$name" --bin "$bin" || fail "the daemons did not start"
check_leases_held "$ns"
check_jobs demo

# Least privilege must still be enough: no request of any daemon was refused.
if grep -n 'Forbidden' "$TEPHRA_CP_DIR"/logs/tephra-*.log; then
  fail "a daemon was refused a request: the chart's RBAC misses a rule (lines above)"
fi
say "no request was refused"

hack/local-daemons.sh stop --name "$name" >/dev/null
say "helm uninstall"
helm_ uninstall tephra -n "$ns" --wait >/dev/null || fail "helm uninstall failed"
left=$(kubectl get -f "$manifest" --ignore-not-found -o name)
[[ -z "$left" ]] || fail "left after uninstall: $left"
[[ -z "$(helm list -n "$ns" -q)" ]] || fail "the release is still listed"
kubectl get crd jobs.batch.volcano.sh >/dev/null || fail "uninstall removed the CRDs"
queue_uid=$(kubectl get queue default -o 'jsonpath={.metadata.uid}') ||
  fail "uninstall removed the default Queue"

# Installing again adopts the kept default Queue instead of replacing it (same uid).
helm_ install tephra charts/tephra --namespace "$ns" "${values[@]}" >/dev/null ||
  fail "helm install after uninstall failed"
[[ "$(kubectl get queue default -o 'jsonpath={.metadata.uid}')" == "$queue_uid" ]] ||
  fail "the second install replaced the default Queue"
helm_ uninstall tephra -n "$ns" --wait >/dev/null || fail "the second helm uninstall failed"
say "PASS"
