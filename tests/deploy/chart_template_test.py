#!/usr/bin/env python3
"""helm lint and helm template of charts/tephra, without a cluster: every values file lints, and
the rendered objects have the properties the chart promises (hardened pods, probes, leader
election, least-privilege RBAC, webhook settings, local mode, PDB and ServiceMonitor switches,
clear errors for bad values).

    chart_template_test.py SOURCE_DIR [BIN_DIR]   (helm from hack/build-tools.sh's cache, or PATH)

With BIN_DIR (the built daemons), every Deployment's arguments must parse: each daemon is run
with them and --help, which checks flag names and values and exits.
"""
import os
import shutil
import subprocess
import sys

import yaml

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
BIN = sys.argv[2] if len(sys.argv) > 2 else None
CHART = os.path.join(SRC, "charts", "tephra")
NS = "tephra-system"
failures = []


def helm_binary():
    d = subprocess.run([os.path.join(SRC, "hack", "build-tools.sh"), "--dir"],
                       capture_output=True, text=True).stdout.strip()
    if d and os.access(os.path.join(d, "helm"), os.X_OK):
        return os.path.join(d, "helm")
    found = shutil.which("helm")
    if not found:
        sys.exit("chart_template_test: no helm; build the tools with hack/build-tools.sh")
    return found


HELM = helm_binary()


def helm(*args):
    return subprocess.run([HELM, *args], capture_output=True, text=True)


def render(*values_args):
    r = helm("template", "tephra", CHART, "--namespace", NS, *values_args)
    if r.returncode != 0:
        raise AssertionError(f"helm template {' '.join(values_args)} failed:\n{r.stderr}")
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def expect(cond, what):
    if not cond:
        failures.append(what)


def kinds(objs, kind):
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def rules_of(objs, kind, name):
    return kinds(objs, kind)[name]["rules"]


def allows(rules, group, resource, verb, name=None):
    for r in rules:
        if (group in r.get("apiGroups", []) and resource in r.get("resources", [])
                and verb in r.get("verbs", [])
                and (not r.get("resourceNames") or name in r["resourceNames"])):
            return True
    return False


LOCAL = ["-f", os.path.join(CHART, "values-local.yaml")]
HA = ["--set", "admission.replicas=3", "--set", "scheduler.replicas=2",
      "--set", "serviceMonitor.enabled=true"]

# 1. helm lint, for the default, local and highly-available values.
for args in ([], LOCAL, HA):
    r = helm("lint", "--strict", CHART, "--namespace", NS, *args)
    expect(r.returncode == 0, f"helm lint --strict {' '.join(args)}:\n{r.stdout}{r.stderr}")

# 2. The default install: three hardened Deployments with probes and leader election.
objs = render()
deployments = kinds(objs, "Deployment")
expect(set(deployments) == {"tephra-scheduler", "tephra-controller-manager", "tephra-admission"},
       f"Deployments: {sorted(deployments)}")
for name, d in deployments.items():
    pod = d["spec"]["template"]["spec"]
    expect(pod["serviceAccountName"] == name, f"{name}: serviceAccountName {pod['serviceAccountName']}")
    expect(pod["securityContext"].get("runAsNonRoot") is True, f"{name}: runAsNonRoot")
    c = pod["containers"][0]
    sc = c["securityContext"]
    expect(sc.get("readOnlyRootFilesystem") is True, f"{name}: readOnlyRootFilesystem")
    expect(sc.get("allowPrivilegeEscalation") is False, f"{name}: allowPrivilegeEscalation")
    expect(c["livenessProbe"]["httpGet"]["path"] == "/healthz", f"{name}: liveness probe")
    expect(c["readinessProbe"]["httpGet"]["path"] == "/readyz", f"{name}: readiness probe")
    expect(c["command"] == [f"/usr/local/bin/{name}"], f"{name}: command {c['command']}")
    expect("resources" in c and c["resources"].get("requests"), f"{name}: resources")
    if name != "tephra-admission":
        expect("--leader-elect=true" in c["args"], f"{name}: leader election off: {c['args']}")
        lease = f"--leader-elect-resource-name={name}"
        expect(lease in c["args"], f"{name}: lease name not {name}")
expect(not kinds(objs, "PodDisruptionBudget"), "a PDB with one admission replica")
expect(not kinds(objs, "ServiceMonitor"), "a ServiceMonitor although disabled")
expect("volcano-scheduler.conf" in kinds(objs, "ConfigMap")["tephra-scheduler"]["data"],
       "scheduler ConfigMap without volcano-scheduler.conf")
queue = kinds(objs, "Queue").get("default")
expect(queue and queue["metadata"]["annotations"].get("helm.sh/hook") == "pre-install",
       "default Queue missing or not a pre-install hook")

# 3. Webhooks: fail closed, the release namespace and kube-system excluded, via the Service.
hooks = list(kinds(objs, "MutatingWebhookConfiguration").values()) + \
    list(kinds(objs, "ValidatingWebhookConfiguration").values())
expect(len(hooks) == 6, f"{len(hooks)} webhook configurations, want 6 (Volcano's chart default)")
for cfg in hooks:
    for w in cfg["webhooks"]:
        expect(w["failurePolicy"] == "Fail", f"{w['name']}: failurePolicy {w['failurePolicy']}")
        expect(w["clientConfig"].get("service", {}).get("name") == "tephra-admission",
               f"{w['name']}: clientConfig {w['clientConfig']}")
        if w["rules"][0]["scope"] == "Namespaced":
            sel = w["namespaceSelector"]["matchExpressions"][0]
            expect(sel["operator"] == "NotIn" and set(sel["values"]) == {"kube-system", NS},
                   f"{w['name']}: namespaceSelector {sel}")

# 4. RBAC: no wildcards; what the code calls is granted, and narrowly.
for kind in ("ClusterRole", "Role"):
    for name, role in kinds(objs, kind).items():
        for r in role["rules"]:
            expect("*" not in r["verbs"] + r["resources"] + r.get("apiGroups", []),
                   f"{kind} {name}: wildcard in {r}")
sched = rules_of(objs, "ClusterRole", "tephra-scheduler")
expect(allows(sched, "", "pods/binding", "create"), "scheduler cannot create pods/binding")
expect(allows(sched, "scheduling.volcano.sh", "podgroups", "patch"), "scheduler cannot patch podgroups")
expect(not allows(sched, "", "pods", "create"), "scheduler may create pods")
expect(not allows(sched, "", "secrets", "get"), "scheduler may read secrets")
cm = rules_of(objs, "ClusterRole", "tephra-controller-manager")
expect(allows(cm, "", "pods", "create"), "controller manager cannot create pods")
expect(not allows(cm, "", "pods/binding", "create"), "controller manager may bind pods")
expect(allows(cm, "topology.volcano.sh", "hypernodes", "delete") and
       allows(cm, "topology.volcano.sh", "hypernodes/status", "patch"),
       "controller manager cannot manage HyperNodes")
expect(not allows(cm, "", "configmaps", "list"), "controller manager may list every ConfigMap")
cm_config = rules_of(objs, "Role", "tephra-controller-manager-config")
expect(allows(cm_config, "", "configmaps", "watch"), "controller manager cannot watch its ConfigMap")
expect("volcano-controller.conf" in kinds(objs, "ConfigMap")["tephra-controller-configmap"]["data"],
       "controller ConfigMap without volcano-controller.conf")
adm = rules_of(objs, "ClusterRole", "tephra-admission")
for cfg in hooks:
    res = cfg["kind"].lower() + "s"
    expect(allows(adm, "admissionregistration.k8s.io", res, "patch", cfg["metadata"]["name"]),
           f"admission cannot patch its own {cfg['metadata']['name']}")
    expect(not allows(adm, "admissionregistration.k8s.io", res, "patch", "someone-elses-webhook"),
           f"admission may patch every {res}")
expect(not allows(adm, "", "secrets", "get"), "admission may read every Secret")
certs = rules_of(objs, "Role", "tephra-admission-certs")
expect(allows(certs, "", "secrets", "update", "tephra-admission-certs"), "admission cannot update its Secret")
expect(not allows(certs, "", "secrets", "update", "other"), "admission may update any Secret")
for daemon in ("scheduler", "controller-manager"):
    lease = rules_of(objs, "Role", f"tephra-{daemon}-leader-election")
    expect(allows(lease, "coordination.k8s.io", "leases", "update", f"tephra-{daemon}"),
           f"{daemon} cannot renew its lease")
    expect(not allows(lease, "coordination.k8s.io", "leases", "update", "kube-scheduler"),
           f"{daemon} may take over any lease")

# 5. High availability: a PDB for the webhook, ServiceMonitors when asked for.
ha = render(*HA)
expect("tephra-admission" in kinds(ha, "PodDisruptionBudget"), "no PDB with 3 admission replicas")
expect(len(kinds(ha, "ServiceMonitor")) == 3, "ServiceMonitors not rendered")

# 6. Local mode: no Deployments or Services; webhooks at https://127.0.0.1:PORT; arguments for
#    the local processes.
local = render(*LOCAL, "--set", "admission.port=9443")
expect(not kinds(local, "Deployment") and not kinds(local, "Service"), "local mode renders pods")
for cfg in list(kinds(local, "MutatingWebhookConfiguration").values()) + \
        list(kinds(local, "ValidatingWebhookConfiguration").values()):
    url = cfg["webhooks"][0]["clientConfig"].get("url", "")
    expect(url.startswith("https://127.0.0.1:9443/"), f"local webhook url {url!r}")
data = kinds(local, "ConfigMap")["tephra-local"]["data"]
for daemon in ("scheduler", "controller-manager", "admission"):
    expect(f"{daemon}.args" in data and data[f"{daemon}.serviceAccount"] == f"tephra-{daemon}",
           f"local ConfigMap lacks {daemon}")
expect("--address=127.0.0.1" in yaml.safe_load(data["admission.args"]),
       "local admission does not listen on 127.0.0.1 only")

# 7. An existing ServiceAccount as a daemon's identity.
own = render("--set", "admission.serviceAccount.create=false", "--set", "admission.serviceAccount.name=ops-webhook")
expect("tephra-admission" not in kinds(own, "ServiceAccount"), "serviceAccount.create=false still creates it")
expect(kinds(own, "ClusterRoleBinding")["tephra-admission"]["subjects"][0]["name"] == "ops-webhook",
       "the admission ClusterRoleBinding does not name serviceAccount.name")
expect(kinds(own, "Deployment")["tephra-admission"]["spec"]["template"]["spec"]["serviceAccountName"]
       == "ops-webhook", "the admission pods do not run as serviceAccount.name")

# 8. Bad values fail with a message naming the key.
for args, message in (
        (["--set", "admission.enabledAdmissions={/jobs/mutate,/nope}"], "enabledAdmissions"),
        (["--set-string", "scheduler.conf=tiers: []"], "scheduler.conf"),
        (["--set", "admission.replicas=many"], "replicas"),
        (["--set", "scheduler.nonsense=1"], "nonsense")):
    r = helm("template", "tephra", CHART, "--namespace", NS, *args)
    expect(r.returncode != 0 and message in r.stderr,
           f"helm template {' '.join(args)}: want an error naming {message}, got: {r.stderr.strip()}")

# 9. `--set key={}` gives [""]: an empty list for optional lists, an error naming the key for
#    lists that need entries.
empty = render("--set", "scheduler.extraArgs={}", "--set", "controllerManager.extraArgs={}",
               "--set", "admission.extraArgs={}", "--set", "imagePullSecrets={}",
               "--set", "scheduler.tolerations={}")
for name, d in kinds(empty, "Deployment").items():
    pod = d["spec"]["template"]["spec"]
    expect("" not in pod["containers"][0]["args"], f"{name}: an empty argument from extraArgs={{}}")
    expect(not pod.get("imagePullSecrets") and not pod.get("tolerations"),
           f"{name}: [\"\"] rendered for imagePullSecrets or tolerations")
for args, message in (
        (["--set", "controllerManager.controllers={}"], "controllers"),
        (["--set", "schedulerNames={}"], "schedulerNames")):
    r = helm("template", "tephra", CHART, "--namespace", NS, *args)
    expect(r.returncode != 0 and message in r.stderr,
           f"helm template {' '.join(args)}: want an error naming {message}, got: {r.stderr.strip()}")

# 10. The webhook server's bounds reach the daemon.
adm_args = deployments["tephra-admission"]["spec"]["template"]["spec"]["containers"][0]["args"]
for flag in ("--max-connections=1000", "--max-queued-requests=64", "--max-buffered-request-mib=64",
             "--idle-timeout=90s", "--threads=0"):
    expect(flag in adm_args, f"admission arguments lack {flag}: {adm_args}")


# 11. The scheduler's admin API: off by default; when enabled, TLS on loopback with generated
#     certificates (or a Secret of one's own), client certificates on request, and never
#     anonymous beyond loopback.
def scheduler_of(objs_):
    return kinds(objs_, "Deployment")["tephra-scheduler"]["spec"]["template"]["spec"]


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, capture_output=True, text=True)


expect(not any(a.startswith("--admin") for a in scheduler_of(objs)["containers"][0]["args"]),
       "admin API on by default")
expect("tephra-scheduler-admin-tls" not in kinds(objs, "Secret"), "admin Secret without the admin API")
admin = render("--set", "scheduler.admin.enabled=true")
spec = scheduler_of(admin)
args = spec["containers"][0]["args"]
for flag in ("--admin-address=127.0.0.1:8091", "--admin-tls-cert=/etc/tephra-admin-tls/tls.crt",
             "--admin-tls-key=/etc/tephra-admin-tls/tls.key"):
    expect(flag in args, f"admin API arguments lack {flag}: {args}")
expect(not any(a.startswith("--admin-tls-client-ca") for a in args), "client CA without clientAuth")
volumes = {v["name"]: v for v in spec["volumes"]}
expect(volumes.get("admin-tls", {}).get("secret", {}).get("secretName") == "tephra-scheduler-admin-tls",
       f"admin TLS volume: {volumes.get('admin-tls')}")
secret = kinds(admin, "Secret").get("tephra-scheduler-admin-tls", {}).get("data", {})
expect(set(secret) == {"ca.crt", "tls.crt", "tls.key", "client.crt", "client.key"},
       f"admin Secret keys: {sorted(secret)}")
if secret and shutil.which("openssl"):
    import base64
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for key, value in secret.items():
            with open(os.path.join(tmp, key), "wb") as f:
                f.write(base64.b64decode(value))
        for cert in ("tls.crt", "client.crt"):
            r = openssl("verify", "-CAfile", os.path.join(tmp, "ca.crt"), os.path.join(tmp, cert))
            expect(r.returncode == 0, f"admin {cert} does not verify against ca.crt: {r.stdout}{r.stderr}")
        r = openssl("x509", "-noout", "-ext", "subjectAltName", "-in", os.path.join(tmp, "tls.crt"))
        expect("IP Address:127.0.0.1" in r.stdout and "tephra-scheduler.tephra-system.svc" in r.stdout,
               f"admin serving certificate names: {r.stdout}{r.stderr}")
mtls = render("--set", "scheduler.admin.enabled=true", "--set", "scheduler.admin.tls.clientAuth=true",
              "--set", "scheduler.admin.address=0.0.0.0")
args = scheduler_of(mtls)["containers"][0]["args"]
expect("--admin-tls-client-ca=/etc/tephra-admin-tls/ca.crt" in args and
       "--admin-address=0.0.0.0:8091" in args, f"mutual-TLS admin arguments: {args}")
own_admin = render("--set", "scheduler.admin.enabled=true", "--set", "scheduler.admin.tls.existingSecret=mine")
expect("tephra-scheduler-admin-tls" not in kinds(own_admin, "Secret"), "admin Secret generated beside existingSecret")
expect({v["name"]: v for v in scheduler_of(own_admin)["volumes"]}["admin-tls"]["secret"]["secretName"] == "mine",
       "existingSecret not mounted")
for extra in (["--set", "scheduler.admin.tls.enabled=false"], []):
    r = helm("template", "tephra", CHART, "--namespace", NS, "--set", "scheduler.admin.enabled=true",
             "--set", "scheduler.admin.address=0.0.0.0", *extra)
    expect(r.returncode != 0 and "scheduler.admin.address" in r.stderr,
           f"anonymous admin API beyond loopback rendered ({extra}): {r.stderr.strip()}")
local_admin = render(*LOCAL, "--set", "scheduler.admin.enabled=true")
local_args = yaml.safe_load(kinds(local_admin, "ConfigMap")["tephra-local"]["data"]["scheduler.args"])
expect("--admin-address=127.0.0.1:8091" in local_args and
       not any(a.startswith("--admin-tls") for a in local_args), f"local admin arguments: {local_args}")

# 11b. The dashboard: off by default; when on, the admin API's TLS (also without the admin API),
#      a Service port, and the same loopback rule.
expect(not any(a.startswith("--dashboard") for a in scheduler_of(objs)["containers"][0]["args"]),
       "dashboard on by default")
dash = render("--set", "scheduler.dashboard.enabled=true")
args = scheduler_of(dash)["containers"][0]["args"]
for flag in ("--dashboard-address=127.0.0.1:8092", "--admin-tls-cert=/etc/tephra-admin-tls/tls.crt",
             "--admin-tls-key=/etc/tephra-admin-tls/tls.key"):
    expect(flag in args, f"dashboard arguments lack {flag}: {args}")
expect(not any(a.startswith("--admin-address") for a in args), f"admin API on with the dashboard: {args}")
expect("tephra-scheduler-admin-tls" in kinds(dash, "Secret"), "no TLS Secret for the dashboard")
rules = kinds(dash, "ClusterRole")["tephra-scheduler"]["rules"]
expect(any("events" in r["resources"] and r["verbs"] == ["list"] for r in rules),
       f"the dashboard cannot list Events: {rules}")
ports = {p["name"]: p for p in kinds(dash, "Service")["tephra-scheduler"]["spec"]["ports"]}
expect(ports.get("dashboard", {}).get("port") == 8092, f"dashboard Service port: {ports}")
r = helm("template", "tephra", CHART, "--namespace", NS, "--set", "scheduler.dashboard.enabled=true",
         "--set", "scheduler.dashboard.address=0.0.0.0")
expect(r.returncode != 0 and "scheduler.dashboard.address" in r.stderr,
       f"anonymous dashboard beyond loopback rendered: {r.stderr.strip()}")
local_dash = render(*LOCAL, "--set", "scheduler.dashboard.enabled=true", "--set", "scheduler.dashboard.port=9999")
local_args = yaml.safe_load(kinds(local_dash, "ConfigMap")["tephra-local"]["data"]["scheduler.args"])
expect("--dashboard-address=127.0.0.1:9999" in local_args and
       not any(a.startswith("--admin-tls") for a in local_args), f"local dashboard arguments: {local_args}")

# 12. NetworkPolicy: off by default; when on, metrics only from metricsFrom, the webhook open.
expect(not kinds(objs, "NetworkPolicy"), "NetworkPolicy although disabled")
policies = kinds(render("--set", "networkPolicy.enabled=true",
                        "--set-json", 'networkPolicy.metricsFrom=[{"namespaceSelector":{"matchLabels":'
                        '{"kubernetes.io/metadata.name":"monitoring"}}}]'), "NetworkPolicy")
expect(set(policies) == {"tephra-scheduler", "tephra-controller-manager", "tephra-admission"},
       f"NetworkPolicies: {sorted(policies)}")
for name, port in (("tephra-scheduler", 8080), ("tephra-controller-manager", 11252), ("tephra-admission", 11251)):
    rules = policies.get(name, {}).get("spec", {}).get("ingress") or []
    metrics = [r for r in rules if any(p["port"] == port for p in r.get("ports", []))]
    expect(len(metrics) == 1 and metrics[0].get("from") and
           metrics[0]["from"][0]["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "monitoring"},
           f"{name}: metrics port {port} not limited to metricsFrom: {rules}")
webhook = [r for r in policies.get("tephra-admission", {}).get("spec", {}).get("ingress") or []
           if any(p["port"] == 8443 for p in r.get("ports", []))]
expect(len(webhook) == 1 and "from" not in webhook[0], f"webhook port not open: {webhook}")
closed = kinds(render("--set", "networkPolicy.enabled=true"), "NetworkPolicy")
expect(closed.get("tephra-scheduler", {}).get("spec", {}).get("ingress") == [],
       f"scheduler policy without metricsFrom: {closed.get('tephra-scheduler')}")
for args in (["--set", "networkPolicy.enabled=true"], ["--set", "scheduler.admin.enabled=true"],
             ["--set", "scheduler.extraArgs={}"]):
    r = helm("lint", "--strict", CHART, "--namespace", NS, *args)
    expect(r.returncode == 0, f"helm lint --strict {' '.join(args)}:\n{r.stdout}{r.stderr}")

# 13. The daemons accept the arguments the Deployments give them.
if BIN:
    for variant in (objs, ha, render("--set", "admission.certificate.existingSecret=my-certs"), mtls):
        for name, d in kinds(variant, "Deployment").items():
            c = d["spec"]["template"]["spec"]["containers"][0]
            binary = os.path.join(BIN, os.path.basename(c["command"][0]))
            r = subprocess.run([binary, *c["args"], "--help"], capture_output=True, text=True)
            expect(r.returncode == 0 and "Usage:" in r.stdout + r.stderr,
                   f"{name} refuses the chart's arguments {c['args']}: {r.stderr.strip()}")

for f in failures:
    print("FAIL:", f)
print(f"chart_template_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
