#!/usr/bin/env bash
# The container image, run for real: hack/build-image.sh builds (or reuses the cached) image,
# runc runs the three daemons from its unpacked OCI archive in cluster mode against a control
# plane of this test's own, each as the chart's Deployment describes it (pod_bundle.py: the
# rendered command and arguments, non-root user, all capabilities dropped, read-only root, a
# ServiceAccount token and CA at the standard path, KUBERNETES_SERVICE_HOST/PORT at the loopback
# API server). The webhook makes its own certificates and is reached through its Service (the
# Service IP routed to loopback by an iptables rule of this test); probes are checked by HTTP
# GET on the rendered ports and paths; a gang Job runs to Completed and a bad Job is refused by
# the containerised webhook. docs/image.md describes the image and this test.
#
#   image_test.sh SOURCE_DIR      (needs root; TEPHRA_KEEP_CONTROL_PLANE=1: leave everything up)
#
# Exit 77 (CTest: skipped) only when this machine cannot run a container at all (the exact
# runtime error is printed); a daemon that fails inside a running container fails the test.
set -euo pipefail
src=$1
name=image-e2e-$$
ns=tephra-system
cd "$src"

say() { echo "image_test: $*"; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tephra-image-test.XXXXXX")
runc_root=$work/runc
containers=() dnat=()
logs() {
  local f
  for f in "$work"/logs/*.log; do
    [[ -f "$f" ]] && { echo "----- tail of $f"; grep -v -e 'scheduler: cycle' "$f" | tail -n 25; }
  done
}
fail() { say "FAIL: $*"; logs; exit 1; }
cleanup() {
  if [[ -n "${TEPHRA_KEEP_CONTROL_PLANE:-}" ]]; then say "kept control plane $name and $work"; return; fi
  local c
  for c in "${containers[@]}"; do
    runc --root "$runc_root" kill "$c" TERM >/dev/null 2>&1 || true
  done
  for c in "${containers[@]}"; do
    for _ in $(seq 50); do
      [[ "$(runc --root "$runc_root" state "$c" 2>/dev/null | jq -r .status)" == running ]] || break
      sleep 0.1
    done
    runc --root "$runc_root" delete --force "$c" >/dev/null 2>&1 || true
  done
  (( ${#dnat[@]} )) && { iptables -t nat -D OUTPUT "${dnat[@]}" 2>/dev/null || true; }
  hack/control-plane.sh down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=../../integration/chart_checks.sh
source tests/integration/chart_checks.sh

[[ $(id -u) -eq 0 ]] || { say "SKIP: needs root (runc, iptables, image storage)"; exit 77; }

say "building or reusing the image (hack/build-image.sh --host-build)"
t0=$(date +%s)
image_env=$(hack/build-image.sh --host-build --print-env 2>"$work/build-image.log") ||
  { tail -n 30 "$work/build-image.log"; fail "hack/build-image.sh failed"; }
eval "$image_env"
say "image $TEPHRA_IMAGE ready in $(( $(date +%s) - t0 ))s: $TEPHRA_IMAGE_ARCHIVE"

# ---- the image as a registry would serve it: the OCI archive, unpacked as a runtime would
mkdir -p "$work/layout" "$work/logs"
tar -xf "$TEPHRA_IMAGE_ARCHIVE" -C "$work/layout"
umoci unpack --image "$work/layout:tephra:$TEPHRA_IMAGE_VERSION" "$work/image" >/dev/null ||
  fail "umoci could not unpack $TEPHRA_IMAGE_ARCHIVE"
rootfs=$work/image/rootfs
labels=$(jq -r '.manifests[0].digest' "$work/layout/index.json")
labels=$(jq -r '.config.digest' "$work/layout/blobs/sha256/${labels#sha256:}")
labels=$(jq -c '.config.Labels' "$work/layout/blobs/sha256/${labels#sha256:}")
[[ "$(jq -r '."org.opencontainers.image.version"' <<<"$labels")" == "$TEPHRA_IMAGE_VERSION" &&
   "$(jq -r '."org.opencontainers.image.revision"' <<<"$labels")" == "$TEPHRA_IMAGE_REVISION" ]] ||
  fail "the image's OCI labels do not name version $TEPHRA_IMAGE_VERSION and revision $TEPHRA_IMAGE_REVISION: $labels"
for tool in gcc g++ cc c++ cmake ld; do
  [[ ! -e "$rootfs/usr/bin/$tool" ]] || fail "the image contains a build tool: /usr/bin/$tool"
done
jq -e '[.packages[].name] | index("libgrpc++1.51") and index("base-files")' "$TEPHRA_IMAGE_SBOM" \
  >/dev/null || fail "the SBOM $TEPHRA_IMAGE_SBOM does not list the image's Debian packages"

# run_once ID BUNDLE: runs a container to its end (output on stdout).
run_once() { runc --root "$runc_root" run --bundle "$2" "$1-$$" </dev/null; }
bundle_for() {  # bundle_for DIR ARGS...: a bundle of the image that runs ARGS (no network)
  mkdir -p "$1"
  jq --arg root "$rootfs" --argjson args "$(printf '%s\n' "${@:2}" | jq -R . | jq -s .)" \
    '.process.args = $args | .process.terminal = false | .process.rlimits = []
     | .root = {path: $root, readonly: true}' "$work/image/config.json" >"$1/config.json"
}
# Can this machine run a container at all? /bin/true from the image says so; anything the
# runtime refuses here is an environment limit (skip), not a fault of the image.
bundle_for "$work/probe" /bin/true
if ! out=$(run_once probe "$work/probe" 2>&1); then
  say "SKIP: runc cannot start a container on this machine: $out"
  exit 77
fi
# Every daemon starts in the image: its shared libraries are all there.
for d in scheduler controller-manager admission; do
  bundle_for "$work/version-$d" "/usr/local/bin/tephra-$d" --version
  out=$(run_once "version-$d" "$work/version-$d" 2>&1) || fail "tephra-$d --version in the image: $out"
  [[ "$out" == *"$TEPHRA_IMAGE_VERSION"* ]] || fail "tephra-$d --version says '$out'"
done
say "the daemons start in the image (no build tools, labels and SBOM present)"

# ---- a control plane and the chart in cluster mode
say "starting control plane $name"
hack/control-plane.sh up --name "$name" --nodes 2 --node-cpu 8 --node-memory 32Gi >/dev/null
eval "$(hack/control-plane.sh env --name "$name")"
api_port=${TEPHRA_APISERVER##*:}

# The chart's ports on the host network: free ones, so that other runs on this machine do not
# collide; everything else as `helm install` renders it by default.
read -r p1 p2 p3 p4 <<<"$(python3 hack/free_ports.py 4)"
values=(--set "admission.port=$p1" --set "admission.healthzPort=$p2"
        --set "controllerManager.healthzPort=$p3" --set "scheduler.metricsPort=$p4")
helm_ install tephra charts/tephra --namespace "$ns" --create-namespace "${values[@]}" >/dev/null ||
  fail "helm install failed"
helm_ get manifest tephra -n "$ns" | python3 -c '
import json, sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "Deployment":
        json.dump(d, open(sys.argv[1] + "/" + d["metadata"]["name"] + ".json", "w"))' "$work"
chart_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/tephra/Chart.yaml)
for d in scheduler controller-manager admission; do
  image=$(jq -r '.spec.template.spec.containers[0].image' "$work/tephra-$d.json")
  [[ "$image" == "tephra:$chart_version" && "$chart_version" == "$TEPHRA_IMAGE_VERSION" ]] ||
    fail "the chart's $d image is $image, the image built is tephra:$TEPHRA_IMAGE_VERSION"
done

# The webhook's Service: the API server calls its ClusterIP:443, which leads to the container's
# port on loopback here (kube-proxy's part).
service_ip=$(kubectl -n "$ns" get service tephra-admission -o 'jsonpath={.spec.clusterIP}')
dnat=(-d "$service_ip/32" -p tcp --dport 443 -m comment --comment "$name"
      -j DNAT --to-destination "127.0.0.1:$p1")
iptables -t nat -A OUTPUT "${dnat[@]}" || { dnat=(); fail "iptables could not route the Service IP"; }

# ---- the daemons in containers, the webhook first (its hooks fail closed)
declare -A ready_url live_url
for d in admission controller-manager scheduler; do
  probes=$(python3 tests/e2e/image/pod_bundle.py --deployment "$work/tephra-$d.json" \
    --image-config "$work/image/config.json" --rootfs "$rootfs" --out "$work/$d" \
    --apiserver-host 127.0.0.1 --apiserver-port "$api_port" --ca "$TEPHRA_CA_FILE" \
    --namespace "$ns") || fail "no bundle for tephra-$d"
  ready_url[$d]=$(jq -r 'select(.probe == "readiness").url' <<<"$probes")
  live_url[$d]=$(jq -r 'select(.probe == "liveness").url' <<<"$probes")
  containers+=("tephra-$d-$$")
  ( exec setsid runc --root "$runc_root" run --detach --bundle "$work/$d" "tephra-$d-$$" \
      >>"$work/logs/tephra-$d.log" 2>&1 </dev/null ) || fail "runc could not start tephra-$d"
  eventually 60 curl -sf "${ready_url[$d]}" ||
    fail "tephra-$d not ready: GET ${ready_url[$d]} ($(curl -s -o /dev/null -w '%{http_code}' "${ready_url[$d]}"))"
  curl -sf "${live_url[$d]}" >/dev/null || fail "tephra-$d not live: GET ${live_url[$d]}"
  say "tephra-$d ready in its container (GET ${ready_url[$d]}, ${live_url[$d]})"
done

# The containers are what the chart asks for: non-root, no capabilities, no new privileges,
# read-only root.
for d in admission controller-manager scheduler; do
  pid=$(runc --root "$runc_root" state "tephra-$d-$$" | jq -r .pid)
  status=$(cat "/proc/$pid/status")
  grep -Eq '^Uid:\s+65532\s+65532\s+65532\s+65532$' <<<"$status" || fail "tephra-$d does not run as 65532"
  grep -Eq '^CapEff:\s+0+$' <<<"$status" && grep -Eq '^CapBnd:\s+0+$' <<<"$status" ||
    fail "tephra-$d has capabilities: $(grep ^Cap <<<"$status")"
  grep -Eq '^NoNewPrivs:\s+1$' <<<"$status" || fail "tephra-$d may gain privileges"
  if out=$(runc --root "$runc_root" exec "tephra-$d-$$" /bin/touch /usr/local/bin/x 2>&1); then
    fail "tephra-$d can write to its root filesystem"
  fi
  [[ "$out" == *"Read-only file system"* ]] || fail "writing to tephra-$d's root: $out"
  [[ ! -e /proc/$pid/root/usr/local/bin/x ]] || fail "tephra-$d wrote to its root"
done
say "the containers run as 65532 without capabilities on a read-only root"

# The webhook made its own certificates and wrote the CA into the hook configurations.
kubectl -n "$ns" get secret tephra-admission-certs -o json |
  jq -e '.data["tls.crt"] and .data["tls.key"] and .data["ca.crt"]' >/dev/null ||
  fail "tephra-admission did not store its certificates in Secret $ns/tephra-admission-certs"
kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations \
  -l app.kubernetes.io/instance=tephra -o json |
  jq -e '[.items[].webhooks[]] | length > 0 and all((.clientConfig.caBundle // "") != ""
         and .clientConfig.service.name == "tephra-admission")' >/dev/null ||
  fail "the webhook configurations lack the Service or the CA bundle"
check_leases_held "$ns"

# ---- a bad Job refused by the webhook in its container, a gang Job to Completed
check_jobs demo

if grep -n 'Forbidden' "$work"/logs/tephra-*.log; then
  fail "a daemon was refused a request with its ServiceAccount token (lines above)"
fi
for d in admission controller-manager scheduler; do
  [[ "$(runc --root "$runc_root" state "tephra-$d-$$" | jq -r .status)" == running ]] ||
    fail "tephra-$d's container stopped"
done
say "PASS"
