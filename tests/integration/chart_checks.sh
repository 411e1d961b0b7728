# Checks of an installed chart shared by chart_install_test.sh and tests/e2e/image (sourced, not
# run): the caller defines say MESSAGE and fail MESSAGE (which exits), and runs in the source tree.

# The chart's CRDs are symlinks to crds/; helm reports each one on every command.
helm_() { helm "$@" 2> >(grep -v 'found symbolic link in path' >&2); }

eventually() {  # eventually SECONDS command...: polls until the command (a function) succeeds
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s) < deadline )) || return 1
    sleep 0.5
  done
}

lease_held() { [[ -n "$(kubectl -n "$1" get lease "$2" -o 'jsonpath={.spec.holderIdentity}')" ]]; }
check_leases_held() {  # check_leases_held NAMESPACE: the scheduler and controller manager lead
  local lease
  for lease in tephra-scheduler tephra-controller-manager; do
    eventually 30 lease_held "$1" "$lease" || fail "nobody holds lease $1/$lease"
  done
}

# check_jobs NAMESPACE: in NAMESPACE (created here), a Job with minAvailable above its replicas
# is denied by tephra-admission, and a gang Job runs to Completed, defaulted by the mutating hook.
check_jobs() {
  local ns=$1 bad out
  kubectl create namespace "$ns" >/dev/null
  bad=$(sed 's/minAvailable: 3/minAvailable: 4/' examples/job-tensorflow.yaml)
  if out=$(kubectl -n "$ns" create --dry-run=server -f - <<<"$bad" 2>&1); then
    fail "an invalid Job was admitted"
  fi
  grep -q 'admission webhook "validatejob.volcano.sh" denied the request' <<<"$out" ||
    fail "the invalid Job was not denied by the webhook: $out"
  say "a Job with minAvailable above its replicas was denied by the webhook"

  kubectl apply -f examples/queues.yaml >/dev/null
  sed 's/duration: 30s/duration: 2s/' examples/job-tensorflow.yaml |
    kubectl -n "$ns" create -f - >/dev/null
  job_phase() {
    kubectl -n "$ns" get job.batch.volcano.sh tf-dist-mnist -o 'jsonpath={.status.state.phase}'
  }
  completed() { [[ "$(job_phase)" == Completed ]]; }
  eventually 120 completed || fail "job phase '$(job_phase)', want Completed"
  # maxRetry is written only by the mutating webhook (the controller defaults in memory).
  [[ "$(kubectl -n "$ns" get job.batch.volcano.sh tf-dist-mnist -o 'jsonpath={.spec.maxRetry}')" == 3 ]] ||
    fail "the Job was not defaulted by the mutating webhook"
  say "the gang Job tf-dist-mnist ran to Completed"
}
