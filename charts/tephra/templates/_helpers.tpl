{{/*
Names. The full name is at most 40 characters so that "<fullname>-controller-manager" and
"<fullname>-admission" remain valid DNS labels.
*/}}
{{- define "tephra.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "tephra.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<component>"; call with (dict "root" $ "component" "scheduler"). */}}
{{- define "tephra.componentName" -}}
{{- printf "%s-%s" (include "tephra.fullname" .root) .component -}}
{{- end -}}

{{/*
The ServiceAccount (identity) of a component: <component>.serviceAccount.name, or
"<fullname>-<component>"; call with (dict "root" $ "component" NAME).
*/}}
{{- define "tephra.serviceAccountName" -}}
{{- $sections := dict "scheduler" .root.Values.scheduler "controller-manager" .root.Values.controllerManager "admission" .root.Values.admission -}}
{{- default (include "tephra.componentName" .) (get $sections .component).serviceAccount.name -}}
{{- end -}}

{{- define "tephra.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "tephra.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tephra
{{- end -}}

{{/* Labels of one component; call with (dict "root" $ "component" "scheduler"). */}}
{{- define "tephra.componentLabels" -}}
{{ include "tephra.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tephra.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tephra.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tephra.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* Host part of the daemons' listen addresses: all interfaces in a pod, loopback locally. */}}
{{- define "tephra.bindHost" -}}
{{- if .Values.local.enabled -}}{{ .Values.local.address }}{{- end -}}
{{- end -}}

{{- define "tephra.schedulerConfPath" -}}/etc/tephra/volcano-scheduler.conf{{- end -}}

{{/* The admission paths as webhook configuration names: /jobs/mutate -> <fullname>-admission-jobs-mutate. */}}
{{- define "tephra.webhookConfigPrefix" -}}
{{- include "tephra.componentName" (dict "root" . "component" "admission") -}}
{{- end -}}

{{/* Lease names, fixed so that RBAC can name them. */}}
{{- define "tephra.schedulerLease" -}}
{{- include "tephra.componentName" (dict "root" . "component" "scheduler") -}}
{{- end -}}
{{- define "tephra.controllerManagerLease" -}}
{{- include "tephra.componentName" (dict "root" . "component" "controller-manager") -}}
{{- end -}}

{{- define "tephra.admissionSecret" -}}
{{- if .Values.admission.certificate.existingSecret -}}
{{- .Values.admission.certificate.existingSecret -}}
{{- else -}}
{{- printf "%s-certs" (include "tephra.webhookConfigPrefix" .) -}}
{{- end -}}
{{- end -}}

{{/* Leader-election flags as a list; call with (dict "root" $ "lease" NAME). */}}
{{- define "tephra.leaderElectionArgs" -}}
{{- $le := .root.Values.leaderElection -}}
{{- $a := list (printf "--leader-elect=%t" $le.enabled) -}}
{{- if $le.enabled -}}
{{- $a = append $a (printf "--leader-elect-resource-namespace=%s" .root.Release.Namespace) -}}
{{- $a = append $a (printf "--leader-elect-resource-name=%s" .lease) -}}
{{- $a = append $a (printf "--leader-elect-lease-duration=%s" $le.leaseDuration) -}}
{{- $a = append $a (printf "--leader-elect-renew-deadline=%s" $le.renewDeadline) -}}
{{- $a = append $a (printf "--leader-elect-retry-period=%s" $le.retryPeriod) -}}
{{- end -}}
{{- toYaml $a -}}
{{- end -}}

{{/* --scheduler-name for every name: all three daemons take them. */}}
{{- define "tephra.suiteArgs" -}}
{{- $a := list -}}
{{- range .Values.schedulerNames -}}
{{- $a = append $a (printf "--scheduler-name=%s" .) -}}
{{- end -}}
{{- toYaml $a -}}
{{- end -}}

{{/*
A list value without empty strings, as YAML: `--set key={}` gives [""], which means "none".
*/}}
{{- define "tephra.listValues" -}}
{{- toYaml (without (. | default list) "") -}}
{{- end -}}

{{/* The scheduler's admin API: Secret name, and flags (none when disabled). */}}
{{- define "tephra.scheduler.adminSecret" -}}
{{- $t := .Values.scheduler.admin.tls -}}
{{- if $t.existingSecret -}}
{{- $t.existingSecret -}}
{{- else -}}
{{- printf "%s-admin-tls" (include "tephra.componentName" (dict "root" . "component" "scheduler")) -}}
{{- end -}}
{{- end -}}

{{- define "tephra.scheduler.adminTlsDir" -}}/etc/tephra-admin-tls{{- end -}}

{{/* Whether the admin API and the dashboard serve TLS: on by default, never in local mode (no
Secret volumes). */}}
{{- define "tephra.scheduler.adminTls" -}}
{{- $s := .Values.scheduler -}}
{{- if and (or $s.admin.enabled $s.dashboard.enabled) $s.admin.tls.enabled (not .Values.local.enabled) -}}true{{- end -}}
{{- end -}}

{{- define "tephra.scheduler.adminArgs" -}}
{{- $adm := .Values.scheduler.admin -}}
{{- $dash := .Values.scheduler.dashboard -}}
{{- $a := list -}}
{{- if $adm.enabled -}}
{{- $host := $adm.address -}}
{{- if contains ":" $host -}}{{- $host = printf "[%s]" $host -}}{{- end -}}
{{- $a = append $a (printf "--admin-address=%s:%d" $host (int $adm.port)) -}}
{{- end -}}
{{- if $dash.enabled -}}
{{- $host := $dash.address -}}
{{- if contains ":" $host -}}{{- $host = printf "[%s]" $host -}}{{- end -}}
{{- $a = append $a (printf "--dashboard-address=%s:%d" $host (int $dash.port)) -}}
{{- end -}}
{{- if or $adm.enabled $dash.enabled -}}
{{- if include "tephra.scheduler.adminTls" . -}}
{{- $dir := include "tephra.scheduler.adminTlsDir" . -}}
{{- $a = append $a (printf "--admin-tls-cert=%s/tls.crt" $dir) -}}
{{- $a = append $a (printf "--admin-tls-key=%s/tls.key" $dir) -}}
{{- if $adm.tls.clientAuth -}}
{{- $a = append $a (printf "--admin-tls-client-ca=%s/ca.crt" $dir) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $a -}}
{{- end -}}

{{/*
Each daemon's arguments as a YAML list, shared by its Deployment and, in local mode, by the
<fullname>-local ConfigMap that hack/local-daemons.sh reads. Local mode adds --kubeconfig (and
the scheduler's --scheduler-conf) itself.
*/}}
{{- define "tephra.scheduler.args" -}}
{{- $s := .Values.scheduler -}}
{{- $a := list -}}
{{- if not .Values.local.enabled -}}
{{- $a = append $a (printf "--scheduler-conf=%s" (include "tephra.schedulerConfPath" .)) -}}
{{- $a = append $a (printf "--scheduler-conf-configmap=%s/%s" .Release.Namespace (include "tephra.componentName" (dict "root" . "component" "scheduler"))) -}}
{{- end -}}
{{- $a = concat $a (include "tephra.suiteArgs" . | fromYamlArray) -}}
{{- $a = append $a (printf "--default-queue=%s" .Values.defaultQueue.name) -}}
{{- $a = append $a (printf "--schedule-period=%s" $s.schedulePeriod) -}}
{{- $a = append $a (printf "--kube-api-qps=%v" $s.kubeApiQps) -}}
{{- $a = append $a (printf "--kube-api-burst=%d" (int $s.kubeApiBurst)) -}}
{{- $a = append $a (printf "--listen-address=%s:%d" (include "tephra.bindHost" .) (int $s.metricsPort)) -}}
{{- $a = concat $a (include "tephra.leaderElectionArgs" (dict "root" . "lease" (include "tephra.schedulerLease" .)) | fromYamlArray) -}}
{{- $a = append $a (printf "-v=%d" (int $s.logLevel)) -}}
{{- $a = concat $a (include "tephra.scheduler.adminArgs" . | fromYamlArray) -}}
{{- toYaml (concat $a (include "tephra.listValues" $s.extraArgs | fromYamlArray)) -}}
{{- end -}}

{{- define "tephra.controllerManager.args" -}}
{{- $c := .Values.controllerManager -}}
{{- $a := include "tephra.suiteArgs" . | fromYamlArray -}}
{{- $a = append $a (printf "--default-queue=%s" .Values.defaultQueue.name) -}}
{{- $a = append $a (printf "--controllers=%s" (join "," $c.controllers)) -}}
{{- $a = append $a (printf "--controller-conf-configmap=%s/%s" .Release.Namespace (include "tephra.componentName" (dict "root" . "component" "controller-configmap"))) -}}
{{- $a = append $a (printf "--worker-threads=%d" (int $c.workerThreads)) -}}
{{- $a = append $a (printf "--worker-threads-for-podgroup=%d" (int $c.workerThreadsForPodgroup)) -}}
{{- $a = append $a (printf "--worker-threads-for-queue=%d" (int $c.workerThreadsForQueue)) -}}
{{- $a = append $a (printf "--worker-threads-for-gc=%d" (int $c.workerThreadsForGc)) -}}
{{- $a = append $a (printf "--max-pod-writes-in-flight=%d" (int $c.maxPodWritesInFlight)) -}}
{{- $a = append $a (printf "--kube-api-qps=%v" $c.kubeApiQps) -}}
{{- $a = append $a (printf "--kube-api-burst=%d" (int $c.kubeApiBurst)) -}}
{{- $a = append $a (printf "--healthz-address=%s:%d" (include "tephra.bindHost" .) (int $c.healthzPort)) -}}
{{- $a = concat $a (include "tephra.leaderElectionArgs" (dict "root" . "lease" (include "tephra.controllerManagerLease" .)) | fromYamlArray) -}}
{{- $a = append $a (printf "-v=%d" (int $c.logLevel)) -}}
{{- toYaml (concat $a (include "tephra.listValues" $c.extraArgs | fromYamlArray)) -}}
{{- end -}}

{{- define "tephra.admission.args" -}}
{{- $v := .Values.admission -}}
{{- $a := list -}}
{{- if .Values.local.enabled -}}
{{- $a = append $a (printf "--address=%s" .Values.local.address) -}}
{{- $a = append $a (printf "--extra-san=IP:%s" .Values.local.address) -}}
{{- else -}}
{{- $a = append $a "--address=0.0.0.0" -}}
{{- end -}}
{{- $a = append $a (printf "--port=%d" (int $v.port)) -}}
{{- $a = append $a (printf "--healthz-address=%s:%d" (include "tephra.bindHost" .) (int $v.healthzPort)) -}}
{{- $a = append $a (printf "--enabled-admission=%s" (join "," $v.enabledAdmissions)) -}}
{{- $a = concat $a (include "tephra.suiteArgs" . | fromYamlArray) -}}
{{- $a = append $a (printf "--namespace=%s" .Release.Namespace) -}}
{{- $a = append $a (printf "--service-name=%s" (include "tephra.componentName" (dict "root" . "component" "admission"))) -}}
{{- $a = append $a (printf "--webhook-config-name-prefix=%s" (include "tephra.webhookConfigPrefix" .)) -}}
{{- if $v.certificate.existingSecret -}}
{{- $a = append $a "--tls-cert-file=/etc/tephra/certs/tls.crt" -}}
{{- $a = append $a "--tls-private-key-file=/etc/tephra/certs/tls.key" -}}
{{- $a = append $a "--ca-cert-file=/etc/tephra/certs/ca.crt" -}}
{{- else -}}
{{- $a = append $a (printf "--secret-name=%s" (include "tephra.admissionSecret" .)) -}}
{{- end -}}
{{- $a = append $a (printf "--max-queue-depth=%d" (int $v.maxQueueDepth)) -}}
{{- $a = append $a (printf "--enable-queue-allocated-pods-check=%t" $v.enableQueueAllocatedPodsCheck) -}}
{{- $a = append $a (printf "--enable-root-queue-protection=%t" $v.enableRootQueueProtection) -}}
{{- $a = append $a (printf "--threads=%d" (int $v.server.threads)) -}}
{{- $a = append $a (printf "--max-queued-requests=%d" (int $v.server.maxQueuedRequests)) -}}
{{- $a = append $a (printf "--max-connections=%d" (int $v.server.maxConnections)) -}}
{{- $a = append $a (printf "--max-buffered-request-mib=%d" (int $v.server.maxBufferedRequestMiB)) -}}
{{- $a = append $a (printf "--idle-timeout=%s" $v.server.idleTimeout) -}}
{{- $a = append $a (printf "--kube-api-qps=%v" $v.kubeApiQps) -}}
{{- $a = append $a (printf "--kube-api-burst=%d" (int $v.kubeApiBurst)) -}}
{{- $a = append $a (printf "-v=%d" (int $v.logLevel)) -}}
{{- toYaml (concat $a (include "tephra.listValues" $v.extraArgs | fromYamlArray)) -}}
{{- end -}}

{{/*
A pod template's common parts; call with (dict "root" $ "component" NAME "values" SECTION).
*/}}
{{- define "tephra.podSpecCommon" -}}
serviceAccountName: {{ include "tephra.serviceAccountName" . }}
automountServiceAccountToken: true
{{- with (without (.root.Values.imagePullSecrets | default list) "") }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (without (.values.tolerations | default list) "") }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A container's common parts; same arguments as tephra.podSpecCommon. */}}
{{- define "tephra.containerCommon" -}}
image: {{ include "tephra.image" .root }}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
securityContext:
  {{- toYaml .root.Values.securityContext | nindent 2 }}
resources:
  {{- toYaml .values.resources | nindent 2 }}
env:
- name: TEPHRA_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end -}}

{{/* /healthz liveness and /readyz readiness on a named port. */}}
{{- define "tephra.probes" -}}
livenessProbe:
  httpGet: {path: /healthz, port: {{ . }}}
  initialDelaySeconds: 10
  periodSeconds: 10
  failureThreshold: 3
readinessProbe:
  httpGet: {path: /readyz, port: {{ . }}}
  periodSeconds: 5
  failureThreshold: 3
{{- end -}}

{{/* Checks on values that values.schema.json cannot express; fails with a message naming the key. */}}
{{- define "tephra.validate" -}}
{{- $conf := fromYaml .Values.scheduler.conf -}}
{{- if hasKey $conf "Error" -}}
{{- fail (printf "scheduler.conf: not valid YAML: %s" (get $conf "Error")) -}}
{{- end -}}
{{- if not (get $conf "actions") -}}
{{- fail "scheduler.conf: needs \"actions\", e.g. actions: \"enqueue, allocate, backfill\"" -}}
{{- end -}}
{{- if not (get $conf "tiers") -}}
{{- fail "scheduler.conf: needs \"tiers\" with at least one tier of plugins" -}}
{{- end -}}
{{- $adm := .Values.scheduler.admin -}}
{{- if and $adm.enabled (not (has $adm.address (list "127.0.0.1" "::1" "localhost"))) (not .Values.local.enabled) -}}
{{- if not (and $adm.tls.enabled $adm.tls.clientAuth) -}}
{{- fail (printf "scheduler.admin.address %s: beyond loopback the admin API needs scheduler.admin.tls.enabled and scheduler.admin.tls.clientAuth (it serves a cluster-wide snapshot)" $adm.address) -}}
{{- end -}}
{{- end -}}
{{- $dash := .Values.scheduler.dashboard -}}
{{- if and $dash.enabled (not (has $dash.address (list "127.0.0.1" "::1" "localhost"))) (not .Values.local.enabled) -}}
{{- if not (and $adm.tls.enabled $adm.tls.clientAuth) -}}
{{- fail (printf "scheduler.dashboard.address %s: beyond loopback the dashboard needs scheduler.admin.tls.enabled and scheduler.admin.tls.clientAuth (it shows every job and queue)" $dash.address) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.local.enabled .Values.admission.certificate.existingSecret -}}
{{- fail "admission.certificate.existingSecret: not with local.enabled (the local daemon generates its certificate for 127.0.0.1)" -}}
{{- end -}}
{{- end -}}

{{/*
The Role and RoleBinding for one daemon's leader-election Lease in the release namespace; call
with (dict "root" $ "component" NAME "lease" LEASE). A create cannot be limited to a name.
*/}}
{{- define "tephra.leaseRole" -}}
{{- $name := include "tephra.componentName" (dict "root" .root "component" .component) }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "tephra.componentLabels" (dict "root" .root "component" .component) | nindent 4 }}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [{{ .lease }}]
  verbs: [get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "tephra.componentLabels" (dict "root" .root "component" .component) | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}-leader-election
subjects:
- kind: ServiceAccount
  name: {{ include "tephra.serviceAccountName" . }}
  namespace: {{ .root.Release.Namespace }}
{{- end -}}

{{/* A webhook configuration's name; call with (dict "root" $ "path" "/jobs/mutate"). */}}
{{- define "tephra.webhookConfigName" -}}
{{- printf "%s%s" (include "tephra.webhookConfigPrefix" .root) (.path | replace "/" "-") -}}
{{- end -}}
