#!/usr/bin/env bash
# kube/ client benchmark: LIST + decode of 10,000 realistic pods and memory per cached pod,
# against a real control plane, with `kubectl get pods -o json > /dev/null` as the baseline
# measured in the same run. Writes bench/results/kube-decode.json.
#   bench/kube-decode.sh [PODS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pods=${1:-10000}
preset=${TEPHRA_BENCH_PRESET:-release}
name="bench-decode-$$"
out="$root/bench/results"
mkdir -p "$out"

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target bench_kube_decode >/dev/null
bin="$root/build/$preset/bin/bench_kube_decode"

trap '"$root/hack/control-plane.sh" down --name "$name" >/dev/null 2>&1' EXIT
nodes=$(( (pods + 199) / 200 ))
"$root/hack/control-plane.sh" up --name "$name" --nodes "$nodes" --node-pods 250 \
  --node-cpu 1000 --node-memory 4Ti >/dev/null
eval "$("$root/hack/control-plane.sh" env --name "$name")"
kubectl create namespace bench >/dev/null
"$bin" populate --namespace bench --pods "$pods" --nodes "$nodes"
# Let kwok move every pod to Running so the LIST carries full pod status.
until [[ $(kubectl get pods -n bench --field-selector=status.phase=Running -o name | wc -l) -ge $pods ]]; do
  sleep 2
done

echo "== Tephra client (release build)"
"$bin" measure --namespace bench --rounds 5 --json "$out/kube-decode.json"

echo "== baseline: kubectl get pods -o json > /dev/null (median of 5)"
times=()
for i in 1 2 3 4 5; do
  s=$(date +%s.%N)
  kubectl get pods -n bench -o json --chunk-size=500 >/dev/null
  e=$(date +%s.%N)
  times+=("$(python3 -c "print($e-$s)")")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
python3 - "$out/kube-decode.json" "$median" "$pods" <<'PY'
import json, sys
path, kubectl_s, pods = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
r = json.load(open(path))
r["kubectl_get_json_seconds"] = kubectl_s
r["kubectl_pods_per_second"] = pods / kubectl_s
r["speedup_list_decode_vs_kubectl"] = kubectl_s / r["list_decode_seconds"]
json.dump(r, open(path, "w"), indent=1)
print(f"kubectl get -o json       {kubectl_s:.3f} s  {pods / kubectl_s:.0f} pods/s")
print(f"Tephra LIST+decode is {r['speedup_list_decode_vs_kubectl']:.1f}x kubectl's time-to-decoded-list")
PY
