#!/usr/bin/env bash
# Hostile load on a tephra-admission started here (bench/hostile_load.py says what it does):
# the daemon serves on 127.0.0.1 with a certificate made here, against the control plane of
# $KUBECONFIG (eval "$(hack/control-plane.sh env --name NAME)"). Every phase is bounded.
#   bench/hostile-load.sh [TEPHRA_ADMISSION_BINARY] [hostile_load.py arguments...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$root/build/dev/bin/tephra-admission}
shift || true
: "${KUBECONFIG:?set KUBECONFIG, e.g. eval \"\$(hack/control-plane.sh env --name NAME)\"}"
dir=$(mktemp -d /tmp/tephra-hostile-load-XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=hostile-load-ca -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=tephra-admission \
  -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$dir/san.ext"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -set_serial 1 \
  -days 1 -extfile "$dir/san.ext" -out "$dir/tls.crt" 2>/dev/null

free_ports() { python3 "$root/hack/free_ports.py" "$1"; }  # N distinct ports, below the ephemeral range
read -r port health <<<"$(free_ports 2)"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
"$bin" --kubeconfig "$KUBECONFIG" --address 127.0.0.1 --port "$port" \
  --healthz-address "127.0.0.1:$health" --tls-cert-file "$dir/tls.crt" \
  --tls-private-key-file "$dir/tls.key" -v=0 2>"$dir/daemon.log" &
pid=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$health/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/daemon.log" >&2; exit 1; }
  sleep 0.5
done
python3 "$root/bench/hostile_load.py" --port "$port" --pid "$pid" --ca "$dir/ca.crt" "$@"
status=0
kill -0 "$pid" 2>/dev/null || { echo "tephra-admission died:" >&2; tail -20 "$dir/daemon.log" >&2; status=1; }
# SIGTERM must end it within a bounded time, stuck reviews or not.
start=$(date +%s.%N)
kill -TERM "$pid"
for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  echo "SIGTERM: still running after 30 s" >&2
  status=1
else
  echo "SIGTERM: exited after $(python3 -c "print(round($(date +%s.%N)-$start,1))") s"
fi
exit $status
