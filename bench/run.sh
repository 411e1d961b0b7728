#!/usr/bin/env bash
# Tephra's benchmark suite: the in-process scheduler grid and the end-to-end contenders on a
# real control plane, then a Markdown report with gnuplot plots.
#
#   bench/run.sh [--quick | --full] [--no-inprocess] [--no-e2e] [--e2e-nodes "N ..."] [--e2e-pods P]
#                [--volcano DIR] [--only "CONTENDER ..."]
#
#   --quick  (default) a few minutes: a slice of the in-process grid, end to end on 500 nodes
#            with 5,000 pods
#   --full   the whole grid (nodes 500/5,000/15,000 × pending 10k/50k/100k × 4 configurations,
#            3 node shapes) and end to end on 500 then 5,000 nodes with 30,000 pods
#   --e2e-nodes "N ..."  end-to-end cluster sizes (grown in one control plane); --e2e-pods P
#   --volcano DIR  real Volcano as two more contenders (plain pods, gang Jobs): its scheduler,
#            controller manager and webhook from a ready build in DIR (README.md naming the
#            commit, bin/vc-*.gz, crds/, volcano-scheduler.conf, chart/webhooks.yaml and
#            chart/volcano-admission.conf), on the same cluster, stream and client QPS. Without
#            it the report says Volcano was not measured.
#   --only "CONTENDER ..."  run only these end-to-end contenders (ceiling, events-ceiling,
#            contract-ceiling, gang-ceiling, gang-events-ceiling, kube-scheduler, tephra-plain,
#            tephra-gang, volcano-plain, volcano-gang), writing to
#            bench/results/<preset>-only/ so the preset's own report stays whole
#
# Output: bench/results/<preset>/{report.md,inprocess.json,e2e.json,runs.json,*.png}; raw series, daemon
# logs and per-run JSON in bench/results/<preset>/raw/ (not committed).
# Everything runs on 127.0.0.1; every daemon started here is stopped here, also on failure.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

preset=quick inprocess=1 e2e=1 e2e_nodes="" e2e_pods="" volcano_dir="" only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) preset=quick; shift ;;
    --full) preset=full; shift ;;
    --no-inprocess) inprocess=0; shift ;;
    --no-e2e) e2e=0; shift ;;
    --e2e-nodes) e2e_nodes=$2; shift 2 ;;
    --e2e-pods) e2e_pods=$2; shift 2 ;;
    --volcano) volcano_dir=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --only) only=" $2 "; shift 2 ;;
    *) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

out="$root/bench/results/$preset${only:+-only}"
# wanted CONTENDER: whether --only (when given) names it.
wanted() { [[ -z $only || $only == *" $1 "* ]]; }
raw="$out/raw"
mkdir -p "$raw"
# The exact command lines, per part, so that a part run alone keeps the other's.
commands="$raw/commands-build.txt"
: >"$commands"
step() { echo "==> $* ($(date +%T))" >&2; }
# run CMD...: records the exact command line for the report, then runs it.
run() {
  printf '%q ' "$@" | sed "s|$root/||g; s|${TEPHRA_CP_DIR:-/nonexistent}|\$CP_DIR|g" >>"$commands"
  echo >>"$commands"
  "$@"
}

step "machine"
python3 - "$raw/machine.json" <<'PY'
import json, os, platform, subprocess, sys
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception: return ""
m = {"kernel": platform.release(), "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
     "cores": os.cpu_count(), "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
     "load_at_start": sh("cut -d' ' -f1-3 /proc/loadavg"), "date": sh("date -u +%FT%TZ"),
     # A part run after another finds that part's results changed: results are not source.
     "commit": sh("git rev-parse --short HEAD"),
     "dirty": bool(sh("git status --porcelain -- . ':!bench/results'"))}
json.dump(m, open(sys.argv[1], "w"), indent=1)
print(m)
PY

step "building (release preset)"
run bash hack/install-deps.sh
run cmake --preset release >/dev/null
run cmake --build --preset release -j2 --target bench_scheduler bench_binder bench_e2e \
  tephra-scheduler tephra-controller-manager
bin="$root/build/release/bin"

# ------------------------------------------------------------------------------ in-process
if (( inprocess )); then
  commands="$raw/commands-inprocess.txt"
  : >"$commands"
  step "in-process grid"
  grid=()  # "nodes pods conf shape"
  if [[ $preset == quick ]]; then
    grid+=("500 10000 default uniform" "5000 10000 default uniform" "5000 50000 default uniform"
           "5000 100000 default uniform" "15000 10000 default uniform"
           "5000 10000 binpack uniform" "5000 10000 drf uniform" "5000 10000 proportion uniform"
           "5000 10000 default mixed" "5000 10000 default taints")
  else
    for conf in default binpack drf proportion; do
      for nodes in 500 5000 15000; do
        for pods in 10000 50000 100000; do grid+=("$nodes $pods $conf uniform"); done
      done
    done
    for shape in mixed taints; do
      for nodes in 500 5000 15000; do
        for pods in 10000 100000; do grid+=("$nodes $pods default $shape"); done
      done
    done
  fi
  rm -f "$raw"/inprocess-*.json
  for point in "${grid[@]}"; do
    read -r nodes pods conf shape <<<"$point"
    run "$bin/bench_scheduler" --nodes "$nodes" --pods "$pods" --conf "$conf" --shape "$shape" \
      --json "$raw/inprocess-$conf-$shape-$nodes-$pods.json"
  done
  python3 - "$out/inprocess.json" "$raw"/inprocess-*.json <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[2:]]
runs.sort(key=lambda r: (r["conf"], r["shape"], r["nodes"], r["pending_pods"]))
json.dump(runs, open(sys.argv[1], "w"), indent=1)
PY
fi

# ------------------------------------------------------------------------------ end to end
if (( e2e )); then
  commands="$raw/commands-e2e.txt"
  : >"$commands"
  # Cluster sizes grow within one control plane (nodes are only added), so every contender of
  # one size runs on the same cluster.
  # The full preset's kwok node lease is 600 s: at 5,000 nodes the default 40 s alone is 500
  # lease writes a second, which would crowd out every contender's.
  if [[ $preset == quick ]]; then sizes=${e2e_nodes:-500} pods=${e2e_pods:-5000} lease=40
  else sizes=${e2e_nodes:-"500 5000"} pods=${e2e_pods:-30000} lease=600; fi
  cp_name="bench-$$"
  daemon_pids=()
  cleanup() {
    local pid
    for pid in "${daemon_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${daemon_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    hack/control-plane.sh down --name "$cp_name" >/dev/null 2>&1 || true
  }
  trap cleanup EXIT
  step "control plane $cp_name"
  run hack/control-plane.sh up --name "$cp_name" --nodes 0 --node-lease "$lease" >/dev/null
  eval "$(hack/control-plane.sh env --name "$cp_name")"
  # use_crds DIR: the CRDs in DIR replace those of the same names (objects stay). Tephra's and
  # Volcano's take turns when Volcano is a contender; a replaced CRD may have no conditions for a
  # moment, which `kubectl wait` reports as an error rather than waiting for, hence the retries.
  use_crds() {
    kubectl apply --server-side --force-conflicts -f "$1" >/dev/null
    local crd
    for crd in jobs.batch.volcano.sh podgroups.scheduling.volcano.sh queues.scheduling.volcano.sh; do
      for _ in $(seq 20); do
        kubectl wait --for condition=established --timeout=30s "crd/$crd" >/dev/null 2>&1 && break
        sleep 1
      done
    done
  }
  use_crds crds/
  plane_pids=$(awk '$1=="kube-apiserver"||$1=="etcd"||$1=="kwok"{printf "%s%s=%s", sep, $1, $2; sep=","}' "$TEPHRA_CP_DIR/pids")
  # Every client of the API server gets the same rate limit: kube-scheduler's default (50/100)
  # would measure its client, not its scheduling (scheduler_perf raises it the same way).
  qps=5000
  # Concurrency where a daemon's default would cap throughput at workers / API latency: the
  # PodGroup controller (a PodGroup per plain pod; default 5, Volcano's), the Job controller
  # (default 3, Volcano's: pod creation near 100/s here) and tephra-scheduler's status writer
  # (default 4) get as many workers as the bind ceiling has. The binder (default 16) gets more:
  # with 32 Job workers creating gangs, hundreds of pod creates are in flight and each bind
  # waits behind them, so bind throughput is workers ÷ bind latency (kube-scheduler binds in
  # unbounded goroutines). 256, as many as the transport keeps connections: against 128, gang
  # p50 / p99 latency 3.1 / 6.2 s → 1.7 / 3.6 s at the same ratio to the ceiling.
  workers=32
  job_workers=32
  bind_workers=256
  # Every daemon logs at its own default verbosity (no -v flags): verbose logging costs CPU.
  ks_conf="$raw/kube-scheduler.yaml"
  cat >"$ks_conf" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KUBECONFIG
  qps: $qps
  burst: $qps
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
EOF

  # start_daemon NAME URL command...: starts a daemon (log raw/<NAME>-<tag>.log) and waits
  # until URL answers; its pid is then in pid_<NAME>.
  start_daemon() {
    local name=$1 url=$2; shift 2
    printf '%q ' "$@" | sed "s|$root/||g; s|$TEPHRA_CP_DIR|\$CP_DIR|g" >>"$commands"; echo "&" >>"$commands"
    "$@" >"$raw/$name-$tag.log" 2>&1 &
    local pid=$!
    daemon_pids+=("$pid")
    eval "pid_$name=$pid"
    for _ in $(seq 300); do
      curl -skf "$url" >/dev/null 2>&1 && return 0
      kill -0 "$pid" 2>/dev/null || { tail -20 "$raw/$name-$tag.log" >&2; return 1; }
      sleep 0.2
    done
    echo "run.sh: $name not ready" >&2; return 1
  }
  stop_daemons() {
    local pid
    for pid in "${daemon_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${daemon_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    daemon_pids=()
  }
  free_ports() { python3 "$root/hack/free_ports.py" "$1"; }  # N distinct ports, below the ephemeral range

  # measure NAME MODE SCHEDULER_NAME PIDS: one measured run of the running daemons, then reset.
  # A slow contender is measured, not cut: bench_e2e gives up only after --stall seconds without
  # a bind that are also ten times the longest gap between binds so far.
  measure() {
    local name=$1 mode=$2 sched=$3 pids=$4 rc=0
    step "e2e $nodes nodes: $name ($mode, $pods pods)"
    local scrape="$raw/apiserver-$nodes-$name"
    kubectl get --raw /metrics >"$scrape-before.txt"
    run "$bin/bench_e2e" run --kubeconfig "$KUBECONFIG" --namespace "bench-$name" --mode "$mode" \
      --scheduler-name "$sched" --pods "$pods" --creators 16 --stall 120 --pids "$pids,$plane_pids" \
      --json "$raw/e2e-$nodes-$name.json" --series "$raw/e2e-$nodes-$name.series" || rc=$?
    # What the run cost the API server, per bound pod (writes are what limits these runs).
    kubectl get --raw /metrics >"$scrape-after.txt"
    python3 bench/api_requests.py "$scrape-before.txt" "$scrape-after.txt" "$raw/e2e-$nodes-$name.json" || true
    # The daemons' own metrics (cycle, bind and status-write latencies) explain their numbers.
    local m
    for m in $metrics_urls; do curl -skf "${m#*=}" >"$raw/metrics-$nodes-$name-${m%%=*}.txt" || true; done
    metrics_urls=""
    stop_daemons
    "${after_stop:-true}"
    [[ $rc == 0 ]] || echo "run.sh: $name did not bind every pod (see $raw/e2e-$nodes-$name.json)" >&2
    # After the last run the control plane goes away: no reset (minutes on a busy machine).
    [[ $name == "$last_run" && $nodes == "${sizes##* }" ]] && return 0
    run "$bin/bench_e2e" reset --kubeconfig "$KUBECONFIG" --namespace "bench-$name"
  }
  tephra_daemons() {
    local sport cport
    read -r sport cport <<<"$(free_ports 2)"
    start_daemon tephra_controller_manager "http://127.0.0.1:$cport/readyz" \
      "$bin/tephra-controller-manager" --kubeconfig "$KUBECONFIG" --leader-elect=false \
      --kube-api-qps "$qps" --kube-api-burst "$qps" --worker-threads "$job_workers" \
      --worker-threads-for-podgroup "$workers" \
      --healthz-address "127.0.0.1:$cport"
    start_daemon tephra_scheduler "http://127.0.0.1:$sport/readyz" \
      "$bin/tephra-scheduler" --kubeconfig "$KUBECONFIG" --leader-elect=false \
      --kube-api-qps "$qps" --kube-api-burst "$qps" --bind-workers "$bind_workers" --status-workers "$workers" \
      --listen-address "127.0.0.1:$sport"
    metrics_urls="tephra_scheduler=http://127.0.0.1:$sport/metrics tephra_controller_manager=http://127.0.0.1:$cport/metrics"
  }

  # Volcano's daemons, unpacked once outside the clone, and what they need on the cluster: its
  # CRDs (in turn with Tephra's), the volcano-system namespace, a serving certificate and the
  # chart's webhook configurations pointed at the local webhook manager.
  last_run=tephra-gang
  rm -f "$raw/volcano.json"
  if [[ -n $volcano_dir ]]; then
    last_run=volcano-gang
    volcano_commit=$(grep -o 'built from commit `[0-9a-f]\{40\}`' "$volcano_dir/README.md" | grep -o '[0-9a-f]\{40\}')
    vbin="$HOME/.cache/tephra/volcano/${volcano_commit:0:12}"
    mkdir -p "$vbin"
    for d in vc-scheduler vc-controller-manager vc-webhook-manager; do
      [[ -x $vbin/$d ]] && continue
      gzip -dc "$volcano_dir/bin/$d.gz" >"$vbin/$d.partial" && chmod +x "$vbin/$d.partial" && mv "$vbin/$d.partial" "$vbin/$d"
    done
    echo "{\"commit\": \"$volcano_commit\"}" >"$raw/volcano.json"
    kubectl create namespace volcano-system >/dev/null
    vpki="$raw/volcano-pki"
    mkdir -p "$vpki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=bench-volcano-ca \
      -keyout "$vpki/ca.key" -out "$vpki/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$vpki/tls.key" \
      -out "$vpki/tls.csr" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >"$vpki/tls.ext"
    openssl x509 -req -in "$vpki/tls.csr" -CA "$vpki/ca.crt" -CAkey "$vpki/ca.key" -CAcreateserial \
      -days 30 -sha256 -extfile "$vpki/tls.ext" -out "$vpki/tls.crt" 2>/dev/null
    # The chart's default admissions.
    volcano_admissions=/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,/hypernodes/validate,/cronjobs/validate
    vwebhook_port=$(free_ports 1)
    vchart="$raw/volcano-webhooks-chart"
    mkdir -p "$vchart/templates"
    cp "$volcano_dir/chart/webhooks.yaml" "$vchart/templates/"
    printf 'apiVersion: v2\nname: volcano-webhooks\nversion: 0.0.1\n' >"$vchart/Chart.yaml"
    printf 'custom:\n  admission_enable: true\n  enabled_admissions: "%s"\n' "$volcano_admissions" >"$vchart/values.yaml"
    helm template volcano "$vchart" --namespace volcano-system |
      python3 -c '
import base64, sys, yaml
port, ca = sys.argv[1], base64.b64encode(open(sys.argv[2], "rb").read()).decode()
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
for d in docs:
    for hook in d["webhooks"]:
        path = hook["clientConfig"]["service"]["path"].strip()
        hook["clientConfig"] = {"url": "https://127.0.0.1:%s%s" % (port, path), "caBundle": ca}
yaml.safe_dump_all(docs, sys.stdout)' "$vwebhook_port" "$vpki/ca.crt" >"$raw/volcano-webhooks.yaml"
  fi
  # volcano_daemons: Volcano's webhook manager, controller manager and scheduler with the client
  # QPS and worker counts the other contenders get; its webhook configurations exist only while
  # it runs (they fail closed, which would refuse Tephra's Jobs once the manager is gone).
  volcano_daemons() {
    local hport cport sport
    read -r hport cport sport <<<"$(free_ports 3)"
    kubectl apply -f "$raw/volcano-webhooks.yaml" >/dev/null
    start_daemon vc_webhook_manager "https://127.0.0.1:$hport/healthz" \
      "$vbin/vc-webhook-manager" --kubeconfig "$KUBECONFIG" --listen-address 127.0.0.1 \
      --port "$vwebhook_port" --webhook-url "https://127.0.0.1:$vwebhook_port" \
      --tls-cert-file "$vpki/tls.crt" --tls-private-key-file "$vpki/tls.key" --ca-cert-file "$vpki/ca.crt" \
      --enabled-admission "$volcano_admissions" --admission-conf "$volcano_dir/chart/volcano-admission.conf" \
      --webhook-namespace volcano-system --webhook-service-name volcano-admission-service \
      --kube-api-qps "$qps" --kube-api-burst "$qps" --enable-healthz=true --healthz-address "127.0.0.1:$hport" \
      --logtostderr
    start_daemon vc_controller_manager "http://127.0.0.1:$cport/healthz" \
      "$vbin/vc-controller-manager" --kubeconfig "$KUBECONFIG" --leader-elect=false --scheduler-name volcano \
      --kube-api-qps "$qps" --kube-api-burst "$qps" --worker-threads "$job_workers" \
      --worker-threads-for-podgroup "$workers" --enable-healthz=true --healthz-address "127.0.0.1:$cport" \
      --enable-metrics=false --logtostderr
    start_daemon vc_scheduler "http://127.0.0.1:$sport/healthz" \
      "$vbin/vc-scheduler" --kubeconfig "$KUBECONFIG" --scheduler-conf "$volcano_dir/volcano-scheduler.conf" \
      --scheduler-name volcano --leader-elect=false --kube-api-qps "$qps" --kube-api-burst "$qps" \
      --enable-healthz=true --healthz-address "127.0.0.1:$sport" --enable-metrics=false --logtostderr
  }
  remove_volcano_webhooks() { kubectl delete -f "$raw/volcano-webhooks.yaml" --ignore-not-found >/dev/null; }
  volcano_pids() {
    echo "vc_scheduler=$pid_vc_scheduler,vc_controller_manager=$pid_vc_controller_manager,vc_webhook_manager=$pid_vc_webhook_manager"
  }

  rm -f "$raw"/e2e-* "$raw"/*.log "$raw"/metrics-*
  metrics_urls=""
  for nodes in $sizes; do
    step "e2e: growing the cluster to $nodes kwok nodes"
    run "$bin/bench_e2e" setup --kubeconfig "$KUBECONFIG" --nodes "$nodes" --shape uniform

    # The bind ceiling: binds and nothing else. The events ceiling adds each pod's Scheduled Event
    # (what kube-scheduler writes), the contract ceiling the writes Volcano's API promises for a
    # bare pod (its PodGroup, the group's status and running count, the Scheduled Event): the
    # limits for any scheduler keeping those promises. The requests for a pod are made one after
    # another, so the workers grow with them. bench_binder has no health endpoint: it is ready
    # once it has listed the nodes. The gang contract ceilings add an idealised Job controller (Volcano's Job and PodGroup
    # writes, one per state shown) for the gang Jobs' stream, without and with Events. Tephra's
    # CRDs go in first: they serve these and Tephra's daemons, and at a second cluster size
    # Volcano's runs of the first have left Volcano's in place.
    use_crds crds/
    for spec in ceiling:none:32:pods events-ceiling:events:64:pods contract-ceiling:volcano:128:pods \
      gang-ceiling:jobs:64:jobs gang-events-ceiling:jobs-events:128:jobs; do
      IFS=: read -r contender contract binder_workers mode <<<"$spec"
      wanted "$contender" || continue
      tag="$nodes-$contender"
      printf 'build/release/bin/bench_binder --kubeconfig $KUBECONFIG --workers %s --contract %s --max-seconds 3600 &\n' \
        "$binder_workers" "$contract" >>"$commands"
      "$bin/bench_binder" --kubeconfig "$KUBECONFIG" --workers "$binder_workers" --contract "$contract" \
        --max-seconds 3600 >"$raw/bench_binder-$tag.log" 2>&1 &
      daemon_pids+=("$!")
      sleep 1
      measure "$contender" "$mode" bench-binder "bench_binder=${daemon_pids[0]}"
    done

    tag="$nodes-kube-scheduler"
    if wanted kube-scheduler; then
    port=$(free_ports 1)
    metrics_urls="kube_scheduler=https://127.0.0.1:$port/metrics"
    start_daemon kube_scheduler "https://127.0.0.1:$port/healthz" \
      "$TEPHRA_TOOLS_BIN/kube-scheduler" --config "$ks_conf" --bind-address 127.0.0.1 --secure-port "$port" \
      --cert-dir "$raw/kube-scheduler-certs" \
      --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics --authentication-skip-lookup=true
    measure kube-scheduler pods default-scheduler "kube_scheduler=$pid_kube_scheduler"
    fi

    for contender in tephra-plain tephra-gang; do
      wanted "$contender" || continue
      tag="$nodes-$contender"
      tephra_daemons
      [[ $contender == tephra-plain ]] && mode=pods || mode=jobs
      measure "$contender" "$mode" volcano \
        "tephra_scheduler=$pid_tephra_scheduler,tephra_controller_manager=$pid_tephra_controller_manager"
    done

    if [[ -n $volcano_dir ]]; then
      use_crds "$volcano_dir/crds"
      for contender in volcano-plain volcano-gang; do
        wanted "$contender" || continue
        tag="$nodes-$contender"
        volcano_daemons
        [[ $contender == volcano-plain ]] && mode=pods || mode=jobs
        after_stop=remove_volcano_webhooks
        measure "$contender" "$mode" volcano "$(volcano_pids)"
        after_stop=""
      done
    fi
  done

  python3 - "$out/e2e.json" "$pods" "$qps" "$workers" "$bind_workers" "$raw"/e2e-*.json <<'PY'
import json, os, re, sys
out, pods, qps, workers, bind_workers = sys.argv[1], *map(int, sys.argv[2:6])
sizes = {}
for p in sys.argv[6:]:
    nodes, name = re.match(r"e2e-(\d+)-(.+)\.json$", os.path.basename(p)).groups()
    sizes.setdefault(nodes, {})[name] = json.load(open(p))
volcano = os.path.join(os.path.dirname(sys.argv[6]) if len(sys.argv) > 6 else "", "volcano.json")
json.dump({"pods": pods, "client_qps": qps, "workers": workers, "bind_workers": bind_workers,
           "volcano": json.load(open(volcano)) if os.path.exists(volcano) else None,
           "sizes": [{"nodes": int(n), "runs": sizes[n]} for n in sorted(sizes, key=int)]},
          open(out, "w"), indent=1)
PY
  trap - EXIT
  cleanup
fi

step "report"
# Which run measured each part: a part that was skipped keeps the figures, and the run, of before.
python3 - "$out/runs.json" "$raw/machine.json" $( ((inprocess)) && echo inprocess) \
  $( ((e2e)) && echo e2e) <<'PY'
import json, os, sys
path, machine, parts = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3:]
# The load the run ends with, kept so that a report made again later still says it.
machine["load_at_end"] = " ".join(open("/proc/loadavg").read().split()[:3])
json.dump(machine, open(sys.argv[2], "w"), indent=1)
runs = json.load(open(path)) if os.path.exists(path) else {}
for part in parts:
    runs[part] = {k: machine[k] for k in ("date", "commit", "dirty", "load_at_start")}
json.dump(runs, open(path, "w"), indent=1)
PY
python3 bench/report.py "$out"
echo "report: $out/report.md" >&2
