#!/usr/bin/env bash
# Real Volcano's admission webhook on a control plane of its own, for checking what Volcano
# accepts and refuses (docs/admission.md). Volcano's CRDs replace Tephra's of the same names, so
# use a control plane only for this:
#
#   hack/control-plane.sh up --name volcano-oracle --nodes 0 --no-kcm
#   eval "$(hack/control-plane.sh env --name volcano-oracle)"
#   tests/oracle/volcano_admission/setup.sh WORKDIR      # starts vc-webhook-manager
#   python3 tests/oracle/volcano_admission/try_cases.py tests/oracle/volcano_admission/cases/pod.py
#   kill "$(cat WORKDIR/webhook.pid)"; hack/control-plane.sh down --name volcano-oracle
set -euo pipefail
work=${1:?usage: setup.sh WORKDIR}
# The Volcano build: $VOLCANO_BASELINE, else ../shared/baselines/volcano beside the repository.
baseline=${VOLCANO_BASELINE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/../shared/baselines/volcano}
admissions=/jobs/mutate,/jobs/validate,/podgroups/mutate,/podgroups/validate,/queues/mutate,/queues/validate,/pods/validate
mkdir -p "$work/chart/templates"
cd "$work"
gzip -dc "$baseline/bin/vc-webhook-manager.gz" > vc-webhook-manager && chmod +x vc-webhook-manager
kubectl apply --server-side --force-conflicts -f "$baseline/crds" >/dev/null
for crd in jobs.batch.volcano.sh queues.scheduling.volcano.sh podgroups.scheduling.volcano.sh; do
  kubectl wait --for=condition=Established "crd/$crd" --timeout=60s >/dev/null
done
kubectl create namespace volcano-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl create namespace t --dry-run=client -o yaml | kubectl apply -f - >/dev/null

openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=volcano-oracle-ca \
  -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout tls.key -out tls.csr 2>/dev/null
printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' > tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -sha256 \
  -extfile tls.ext -out tls.crt 2>/dev/null

port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
webhook_port=$(port)
health_port=$(port)
# The chart's webhook configurations, pointed at the local process.
cp "$baseline/chart/webhooks.yaml" chart/templates/
printf 'apiVersion: v2\nname: volcano-webhooks\nversion: 0.0.1\n' > chart/Chart.yaml
printf 'custom:\n  admission_enable: true\n  enabled_admissions: "%s"\n' "$admissions" > chart/values.yaml
helm template volcano chart --namespace volcano-system -f chart/values.yaml |
  python3 -c '
import base64, sys, yaml
port, ca = sys.argv[1], base64.b64encode(open("ca.crt", "rb").read()).decode()
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    for hook in d["webhooks"]:
        path = hook["clientConfig"]["service"]["path"].strip()
        hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca}
print(yaml.safe_dump_all(docs))' "$webhook_port" | kubectl apply -f - >/dev/null

setsid ./vc-webhook-manager --kubeconfig="$KUBECONFIG" --listen-address=127.0.0.1 \
  --port="$webhook_port" --webhook-url="https://127.0.0.1:$webhook_port" \
  --tls-cert-file="$PWD/tls.crt" --tls-private-key-file="$PWD/tls.key" --ca-cert-file="$PWD/ca.crt" \
  --enabled-admission="$admissions" --admission-conf="$baseline/chart/volcano-admission.conf" \
  --webhook-namespace=volcano-system --webhook-service-name=volcano-admission-service \
  --enable-healthz=true --healthz-address="127.0.0.1:$health_port" --logtostderr -v=2 \
  > webhook.log 2>&1 < /dev/null &
echo $! > webhook.pid

# root and default as Volcano's scheduler would create them, Open as its controller would set.
# The webhook serves a few seconds after it starts (once it has patched the CA bundles): the
# queues go through its /queues/mutate, so try until it answers.
queues() {
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: root}
spec: {weight: 1, reclaimable: false}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1, reclaimable: true}
YAML
}
for _ in $(seq 60); do queues 2>/dev/null && break; sleep 1; done
queues
for q in root default; do
  kubectl patch queue "$q" --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null
done
sleep 5
echo "vc-webhook-manager pid $(cat webhook.pid) on 127.0.0.1:$webhook_port; log $work/webhook.log"
