# The Kubeflow training-operator's jobs (sourced by the tests, after lib.sh): how to start the
# operator with Volcano gang scheduling, and jobs shaped as users write them.

# start_training_operator: CRDs and the operator process. --gang-scheduler-name=volcano is what
# makes it create a PodGroup per job and give the pods schedulerName volcano.
#
# At start the operator writes its webhook certificate into the Secret
# training-operator-webhook-cert of its namespace (kubeflow by default), which must exist, and waits until the kubelet has mounted that Secret at
# /tmp/k8s-webhook-server/serving-certs (a fixed path). There is no kubelet here, so the test
# copies the Secret there itself. Its validating webhook is not registered (it is not part of
# gang scheduling), so the certificate is never used.
start_training_operator() {
  op_crds training-operator
  kubectl create namespace kubeflow >/dev/null
  kubectl -n kubeflow create secret generic training-operator-webhook-cert >/dev/null
  local metrics probe webhook
  read -r metrics probe webhook <<<"$(free_ports 3)"
  op_launch_operator training-operator --gang-scheduler-name=volcano \
    --metrics-bind-address="127.0.0.1:$metrics" --health-probe-bind-address="127.0.0.1:$probe" \
    --webhook-server-port="$webhook"
  eventually 60 mount_webhook_secret || { say "FAIL: the operator wrote no webhook certificate"; exit 1; }
  op_wait_operator training-operator "http://127.0.0.1:$probe/readyz"
}

mount_webhook_secret() {
  local dir=/tmp/k8s-webhook-server/serving-certs key data
  data=$(kubectl -n kubeflow get secret training-operator-webhook-cert -o json)
  mkdir -p "$dir"
  for key in tls.crt tls.key; do
    jq -er --arg k "$key" '.data[$k]' <<<"$data" | base64 -d >"$dir/$key.new" || return 1
    mv "$dir/$key.new" "$dir/$key"
  done
}

# kubeflow_job KIND NAME POLICY REPLICAS...: a kubeflow.org/v1 job in NS. POLICY is the JSON of
# spec.runPolicy.schedulingPolicy ({} for none); each replica is TYPE:COUNT:CPU. Pods run until
# deleted unless ANNOTATIONS (JSON object, env) says otherwise (hack/kwok/stages.yaml).
kubeflow_job() {
  local kind=$1 name=$2 policy=$3 field container; shift 3
  case "$kind" in
    PyTorchJob) field=pytorchReplicaSpecs container=pytorch ;;
    TFJob) field=tfReplicaSpecs container=tensorflow ;;
    XGBoostJob) field=xgbReplicaSpecs container=xgboost ;;
    MPIJob) field=mpiReplicaSpecs container=mpi ;;
    *) echo "kubeflow_job: unknown kind $kind" >&2; return 2 ;;
  esac
  local replicas="" r type count cpu ann=${ANNOTATIONS:-"{}"}
  for r in "$@"; do
    IFS=: read -r type count cpu <<<"$r"
    [[ -n "$replicas" ]] && replicas+=","
    replicas+="\"$type\":{\"replicas\":$count,\"restartPolicy\":\"Never\",\"template\":{
      \"metadata\":{\"annotations\":$ann},
      \"spec\":{\"containers\":[{\"name\":\"$container\",\"image\":\"sim/$container\",
        \"resources\":{\"requests\":{\"cpu\":\"$cpu\",\"memory\":\"1Gi\"}}}]}}}"
  done
  kubectl -n "$NS" create -f - >/dev/null <<EOF
{"apiVersion":"kubeflow.org/v1","kind":"$kind","metadata":{"name":"$name"},
 "spec":{"runPolicy":{"schedulingPolicy":$policy},"$field":{$replicas}}}
EOF
}

# The label the training-operator puts on every pod of job NAME.
job_pods() { echo "training.kubeflow.org/job-name=$1"; }
