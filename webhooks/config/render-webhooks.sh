#!/usr/bin/env bash
# Renders the Mutating/ValidatingWebhookConfigurations of tephra-admission as YAML on stdout,
# one configuration per path, named as Volcano names them (volcano-admission-service-jobs-mutate
# for /jobs/mutate), so the daemon's --webhook-config-name-prefix finds them and fills in the
# caBundle itself.
#
#   webhooks/config/render-webhooks.sh --url https://127.0.0.1:8443 | kubectl apply -f -
#   webhooks/config/render-webhooks.sh --service tephra-admission --service-namespace tephra-system
#
# Options:
#   --url BASE                 clientConfig.url = BASE/<path> (a local process; must be https)
#   --service NAME             clientConfig.service (in-cluster), with --service-namespace NS
#   --paths LIST               comma list (default: Volcano's Helm default, no pod hooks)
#   --name-prefix PREFIX       configuration names (default volcano-admission-service)
#   --suite-namespace NS       excluded from namespaced hooks with kube-system (default tephra-system)
#   --namespace-label K=V      namespaced hooks only see namespaces with this label (repeatable)
#   --queue-object-label K     queue hooks only see queues carrying label K (cluster-scoped
#                              objects cannot be scoped by namespace)
#   --label K=V                label on the configurations (for --webhook-config-label-selector)
#   --pod-failure-policy P     Fail (default) or Ignore for the opt-in pod hooks
#   --ca-bundle B64            initial caBundle (default none: the daemon writes it)
#
# Every hook: failurePolicy Fail (the suite's own kinds fail closed), matchPolicy Equivalent,
# sideEffects None (dry-run requests are judged identically), timeoutSeconds 10,
# admissionReviewVersions [v1]. Namespaced hooks skip kube-system and the suite's namespace, so
# the webhook's own pods can always be restarted.
set -euo pipefail

url="" service="" service_ns="" prefix=volcano-admission-service suite_ns=tephra-system
paths=/jobs/mutate,/jobs/validate,/podgroups/mutate,/podgroups/validate,/queues/mutate,/queues/validate
pod_policy=Fail ca_bundle="" queue_label=""
ns_labels=() config_labels=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --url) url=${2%/}; shift 2 ;;
    --service) service=$2; shift 2 ;;
    --service-namespace) service_ns=$2; shift 2 ;;
    --paths) paths=$2; shift 2 ;;
    --name-prefix) prefix=$2; shift 2 ;;
    --suite-namespace) suite_ns=$2; shift 2 ;;
    --namespace-label) ns_labels+=("$2"); shift 2 ;;
    --queue-object-label) queue_label=$2; shift 2 ;;
    --label) config_labels+=("$2"); shift 2 ;;
    --pod-failure-policy) pod_policy=$2; shift 2 ;;
    --ca-bundle) ca_bundle=$2; shift 2 ;;
    *) echo "render-webhooks: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -n "$url" && -n "$service" ]] || [[ -z "$url" && -z "$service" ]]; then
  echo "render-webhooks: give exactly one of --url and --service" >&2; exit 2
fi
[[ -z "$url" || "$url" == https://* ]] || { echo "render-webhooks: --url must be https" >&2; exit 2; }
[[ -z "$service" || -n "$service_ns" ]] || { echo "render-webhooks: --service needs --service-namespace" >&2; exit 2; }
[[ "$pod_policy" == Fail || "$pod_policy" == Ignore ]] || {
  echo "render-webhooks: --pod-failure-policy must be Fail or Ignore" >&2; exit 2; }

kv() {  # kv K=V INDENT: one YAML mapping entry
  printf '%s"%s": "%s"\n' "$2" "${1%%=*}" "${1#*=}"
}

# path -> webhook name, API group, version, resource, operations, scope
describe() {
  case "$1" in
    /jobs/mutate) echo "mutatejob.volcano.sh batch.volcano.sh v1alpha1 jobs CREATE ns" ;;
    /jobs/validate) echo "validatejob.volcano.sh batch.volcano.sh v1alpha1 jobs CREATE,UPDATE ns" ;;
    /queues/mutate) echo "mutatequeue.volcano.sh scheduling.volcano.sh v1beta1 queues CREATE cluster" ;;
    /queues/validate) echo "validatequeue.volcano.sh scheduling.volcano.sh v1beta1 queues CREATE,UPDATE,DELETE cluster" ;;
    /podgroups/mutate) echo "mutatepodgroup.volcano.sh scheduling.volcano.sh v1beta1 podgroups CREATE ns" ;;
    /podgroups/validate) echo "validatepodgroup.volcano.sh scheduling.volcano.sh v1beta1 podgroups CREATE ns" ;;
    /pods/mutate) echo "mutatepod.volcano.sh core v1 pods CREATE ns" ;;
    /pods/validate) echo "validatepod.volcano.sh core v1 pods CREATE ns" ;;
    *) echo "render-webhooks: unknown path $1" >&2; return 1 ;;
  esac
}

IFS=, read -r -a path_list <<<"$paths"
for path in "${path_list[@]}"; do
  desc=$(describe "$path") || exit 2
  read -r hook group version resource ops scope <<<"$desc"
  [[ "$group" == core ]] && group=""
  if [[ "$path" == */mutate ]]; then kind=MutatingWebhookConfiguration; else kind=ValidatingWebhookConfiguration; fi
  policy=Fail
  [[ "$resource" == pods ]] && policy=$pod_policy
  echo "---"
  echo "apiVersion: admissionregistration.k8s.io/v1"
  echo "kind: $kind"
  echo "metadata:"
  echo "  name: ${prefix}${path//\//-}"
  if [[ ${#config_labels[@]} -gt 0 ]]; then
    echo "  labels:"
    for l in "${config_labels[@]}"; do kv "$l" "    "; done
  fi
  echo "webhooks:"
  echo "- name: $hook"
  echo "  clientConfig:"
  if [[ -n "$url" ]]; then
    echo "    url: \"$url$path\""
  else
    echo "    service: {name: \"$service\", namespace: \"$service_ns\", path: \"$path\", port: 443}"
  fi
  [[ -n "$ca_bundle" ]] && echo "    caBundle: \"$ca_bundle\""
  echo "  rules:"
  echo "  - apiGroups: [\"$group\"]"
  echo "    apiVersions: [\"$version\"]"
  echo "    resources: [\"$resource\"]"
  echo "    operations: [${ops//,/, }]"
  echo "    scope: \"$([[ "$scope" == ns ]] && echo Namespaced || echo Cluster)\""
  echo "  failurePolicy: $policy"
  echo "  matchPolicy: Equivalent"
  echo "  sideEffects: None"
  echo "  timeoutSeconds: 10"
  echo "  admissionReviewVersions: [\"v1\"]"
  [[ "$kind" == MutatingWebhookConfiguration ]] && echo "  reinvocationPolicy: Never"
  if [[ "$scope" == ns ]]; then
    echo "  namespaceSelector:"
    if [[ ${#ns_labels[@]} -gt 0 ]]; then
      echo "    matchLabels:"
      for l in "${ns_labels[@]}"; do kv "$l" "      "; done
    fi
    echo "    matchExpressions:"
    echo "    - key: kubernetes.io/metadata.name"
    echo "      operator: NotIn"
    echo "      values: [\"kube-system\", \"$suite_ns\"]"
  elif [[ -n "$queue_label" ]]; then
    echo "  objectSelector:"
    echo "    matchExpressions:"
    echo "    - {key: \"$queue_label\", operator: Exists}"
  fi
done
