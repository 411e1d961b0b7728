"""What the runner compares: one cluster's state, flattened into `key -> value` facts whose keys
are the same on both sides (no UIDs, generated names or timestamps). README.md lists the keys.

    jobs/NS.PHASE, pgs/NS.PHASE            how many Jobs / PodGroups are in each phase
    job/NS/NAME.phase, .status.running, .spec.minAvailable, .task.T.minAvailable, ...
    pg/NS/ID.phase, .minMember, .minResources, .condition.TYPE (STATUS/REASON), .status.running, ...
        ID: job:NAME for a Job's PodGroup, KIND:NAME for the PodGroup of a workload or plain pod
        (replicaset:web-6d4cf56db6, pod:p1), NAME for a PodGroup the user created
    pods/NS/GROUP.total, .bound, .running, .pending, .succeeded, .failed, .gated, .terminating,
        .nodes (pods being deleted count only as terminating)
        GROUP: job:NAME and job:NAME/TASK, deployment:NAME, replicaset:NAME, statefulset:NAME,
        replicationcontroller:NAME, batchjob:NAME, xpg:NAME (scheduler-plugins pod-group
        label), pod:NAME; and `all`, every pod of the namespace
    queue/NAME.state, .allocated.RESOURCE, .spec.weight, .spec.reclaimable, .spec.parent, ...
    xpg/NS/NAME.phase                      scheduler-plugins PodGroups
    configmap/NS/NAME.KEY                  data of ConfigMaps in the scenario's namespaces
    (with `details: [job-objects]`, what job plugins write, for Volcano Job pods and objects)
    pods/NS/GROUP.domains, pg/NS/ID.allocatedHyperNode   with `details: [placement]`
    (with `details: [storage]`, claims, the scenario's PVs and the pods that mount claims)
    pvc/NS/NAME.phase, .volume, .node      a claim's phase, its PV (the scenario's name, or
                                           "(provisioned)"), the node selected for it
    pvcs/NS.PHASE                          how many claims are in each phase
    pv/NAME.phase, .claim                  a PV the scenario made: its phase, NS/NAME of its claim
    pod/NS/NAME.node, .scheduled, .why     a pod with claims: its node, its PodScheduled
                                           condition (STATUS/REASON), the volume reasons its
                                           message gives (kube-scheduler's wording)
    storage/NS.nodes, storage/NS.why       over those pods: the nodes of the bound ones, the
                                           volume reasons of the waiting ones
    podspec/NS/POD.C.env.VAR               a container's env entry: its value, or where from
    podspec/NS/POD.C.ports, .mounts        its ports (name:port/protocol) and volume mounts
    podspec/NS/POD.hostname, .subdomain    the pod's DNS names
    secret/NS/NAME.KEY                     Secret data (key material as "(N lines)")
    service/NS/NAME.FIELD                  clusterIP, ports, selector, publishNotReadyAddresses
    networkpolicy/NS/NAME.FIELD            podSelector, ingress
    events/NS/OBJECT.REASON: true          only the reasons the scenario lists
    invariant/NAME: held | broken: WHY     the invariants the scenario lists (INVARIANTS)
"""
import base64
import json
import re

from . import quantity

VCJOB = ("batch.volcano.sh/v1alpha1", "Job")
PODGROUP = ("scheduling.volcano.sh/v1beta1", "PodGroup")
QUEUE = ("scheduling.volcano.sh/v1beta1", "Queue")
XPODGROUP = ("scheduling.x-k8s.io/v1alpha1", "PodGroup")
POD = ("v1", "Pod")
REPLICASET = ("apps/v1", "ReplicaSet")
EVENT = ("v1", "Event")
CONFIGMAP = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")
SERVICE = ("v1", "Service")
NETWORKPOLICY = ("networking.k8s.io/v1", "NetworkPolicy")
NODE = ("v1", "Node")
CLAIM = ("v1", "PersistentVolumeClaim")
VOLUME = ("v1", "PersistentVolume")

_OWNER_KINDS = {"ReplicaSet": "replicaset", "ReplicationController": "replicationcontroller",
                "StatefulSet": "statefulset", "Deployment": "deployment", "Pod": "pod",
                "DaemonSet": "daemonset"}
_TERMINAL = ("Succeeded", "Failed")


def _controller(meta):
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    refs = meta.get("ownerReferences") or []
    return refs[0] if refs else None


def _owner_id(ref):
    if ref is None:
        return None
    if ref["kind"] == "Job":
        prefix = "job" if ref.get("apiVersion", "").startswith("batch.volcano.sh/") else "batchjob"
        return f"{prefix}:{ref['name']}"
    return f"{_OWNER_KINDS.get(ref['kind'], ref['kind'].lower())}:{ref['name']}"


def pod_groups(pod, rs_owner):
    """The pod groups a pod counts in: its Volcano Job and task, or its workload, or itself."""
    meta = pod["metadata"]
    labels = meta.get("labels") or {}
    job = labels.get("volcano.sh/job-name")
    if job:
        task = labels.get("volcano.sh/task-spec")
        return [f"job:{job}"] + ([f"job:{job}/{task}"] if task else [])
    xpg = labels.get("scheduling.x-k8s.io/pod-group")
    extra = [f"xpg:{xpg}"] if xpg else []
    ref = _controller(meta)
    if ref is None:
        return extra + [f"pod:{meta['name']}"]
    groups = extra + [_owner_id(ref)]
    if ref["kind"] == "ReplicaSet" and rs_owner.get(ref["name"]):
        groups.append(rs_owner[ref["name"]])
    return groups


def _resources_text(rl):
    return ",".join(f"{k}={v}" for k, v in sorted(quantity.resource_list(rl).items()))


def _count_phases(state, prefix, phases):
    for phase in phases:
        state[f"{prefix}.{phase or 'none'}"] = state.get(f"{prefix}.{phase or 'none'}", 0) + 1


def _observe_jobs(state, ns, jobs):
    _count_phases(state, f"jobs/{ns}", [((j.get("status") or {}).get("state") or {}).get("phase", "")
                                        for j in jobs])
    for job in jobs:
        k = f"job/{ns}/{job['metadata']['name']}"
        spec, status = job.get("spec") or {}, job.get("status") or {}
        state[f"{k}.phase"] = (status.get("state") or {}).get("phase", "")
        for counter in ("pending", "running", "succeeded", "failed", "terminating", "unknown",
                        "retryCount"):
            state[f"{k}.status.{counter}"] = status.get(counter, 0)
        state[f"{k}.spec.minAvailable"] = spec.get("minAvailable")
        state[f"{k}.spec.queue"] = spec.get("queue")
        state[f"{k}.spec.schedulerName"] = spec.get("schedulerName")
        state[f"{k}.spec.maxRetry"] = spec.get("maxRetry")
        for task in spec.get("tasks") or []:
            state[f"{k}.task.{task.get('name')}.minAvailable"] = task.get("minAvailable")


def _podgroup_ids(pgs):
    ids, seen = {}, {}
    for pg in pgs:
        meta = pg["metadata"]
        name = meta["name"]
        ref = _controller(meta)
        generated = name.startswith("podgroup-") or (ref is not None and ref["kind"] == "Job")
        pid = _owner_id(ref) if generated and ref is not None else name
        seen[pid] = seen.get(pid, 0) + 1
        ids[name] = pid if seen[pid] == 1 else f"{pid}#{seen[pid]}"
    return ids


def _observe_podgroups(state, ns, pgs):
    ids = _podgroup_ids(pgs)
    _count_phases(state, f"pgs/{ns}", [(pg.get("status") or {}).get("phase", "") for pg in pgs])
    for pg in pgs:
        k = f"pg/{ns}/{ids[pg['metadata']['name']]}"
        spec, status = pg.get("spec") or {}, pg.get("status") or {}
        state[f"{k}.phase"] = status.get("phase", "")
        state[f"{k}.minMember"] = spec.get("minMember", 0)
        state[f"{k}.queue"] = spec.get("queue", "")
        state[f"{k}.minResources"] = _resources_text(spec.get("minResources"))
        state[f"{k}.minTaskMember"] = ",".join(
            f"{t}={n}" for t, n in sorted((spec.get("minTaskMember") or {}).items()))
        for c in status.get("conditions") or []:
            reason = c.get("reason") or ""
            state[f"{k}.condition.{c.get('type')}"] = f"{c.get('status')}" + (f"/{reason}" if reason else "")
        for counter in ("running", "succeeded", "failed"):
            state[f"{k}.status.{counter}"] = status.get(counter, 0)
    return ids


def _observe_pods(state, ns, pods, replicasets):
    rs_owner = {}
    for rs in replicasets:
        ref = _controller(rs["metadata"])
        if ref is not None and ref["kind"] == "Deployment":
            rs_owner[rs["metadata"]["name"]] = f"deployment:{ref['name']}"
    counts, nodes, group_of = {}, {}, {}
    for pod in pods:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        groups = pod_groups(pod, rs_owner)
        group_of[meta["name"]] = groups[-1]
        groups.append("all")
        for g in groups:
            c = counts.setdefault(g, {"total": 0, "bound": 0, "running": 0, "pending": 0,
                                      "succeeded": 0, "failed": 0, "gated": 0, "terminating": 0})
            if meta.get("deletionTimestamp"):
                c["terminating"] += 1
        if meta.get("deletionTimestamp"):
            continue
        phase = status.get("phase", "Pending")
        node = spec.get("nodeName")
        for g in groups:
            c = counts[g]
            c["total"] += 1
            if node and phase not in _TERMINAL:
                c["bound"] += 1
                nodes.setdefault(g, set()).add(node)
            if not node:
                c["pending"] += 1
            if phase == "Running":
                c["running"] += 1
            elif phase == "Succeeded":
                c["succeeded"] += 1
            elif phase == "Failed":
                c["failed"] += 1
            if spec.get("schedulingGates"):
                c["gated"] += 1
    for g, c in counts.items():
        for name, n in c.items():
            state[f"pods/{ns}/{g}.{name}"] = n
        state[f"pods/{ns}/{g}.nodes"] = len(nodes.get(g, ()))
    return group_of


def _observe_events(state, ns, events, reasons, pod_group_of, pg_ids):
    for ev in events:
        reason = ev.get("reason")
        if reason not in reasons:
            continue
        obj = ev.get("involvedObject") or {}
        kind, name = obj.get("kind"), obj.get("name", "")
        if kind == "Pod":
            who = pod_group_of.get(name, f"pod:{name}")
        elif kind == "PodGroup":
            who = f"pg:{pg_ids.get(name, name)}"
        elif kind == "Job" and obj.get("apiVersion", "").startswith("batch.volcano.sh"):
            who = f"job:{name}"
        else:
            who = f"{(kind or '').lower()}:{name}"
        state[f"events/{ns}/{who}.{reason}"] = True


def _observe_queues(state, queues):
    for q in queues:
        name = q["metadata"]["name"]
        spec, status = q.get("spec") or {}, q.get("status") or {}
        k = f"queue/{name}"
        state[f"{k}.state"] = status.get("state", "")
        for res, v in quantity.resource_list(status.get("allocated")).items():
            if v:  # an absent resource and a zero one mean the same
                state[f"{k}.allocated.{res}"] = v
        state[f"{k}.spec.weight"] = spec.get("weight")
        state[f"{k}.spec.reclaimable"] = spec.get("reclaimable")
        state[f"{k}.spec.parent"] = spec.get("parent")
        for field in ("capability", "deserved"):
            if spec.get(field):
                state[f"{k}.spec.{field}"] = _resources_text(spec.get(field))
        if (spec.get("guarantee") or {}).get("resource"):
            state[f"{k}.spec.guarantee"] = _resources_text(spec["guarantee"]["resource"])


def _podgroup_not_pending_while_pod_runs(pods_by_ns, pgs_by_ns, nodes):
    for ns, pods in pods_by_ns.items():
        phase = {pg["metadata"]["name"]: (pg.get("status") or {}).get("phase", "")
                 for pg in pgs_by_ns[ns]}
        for pod in pods:
            group = (pod["metadata"].get("annotations") or {}).get("scheduling.k8s.io/group-name")
            if (pod.get("status") or {}).get("phase") == "Running" and phase.get(group) in ("Pending", ""):
                return f"pod {ns}/{pod['metadata']['name']} Running while its PodGroup is Pending"
    return None


def _node_capacity(pods_by_ns, pgs_by_ns, nodes):
    used = {}
    for pods in pods_by_ns.values():
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if not node or (pod.get("status") or {}).get("phase") in _TERMINAL:
                continue
            for c in pod["spec"].get("containers") or []:
                cpu = quantity.parse(((c.get("resources") or {}).get("requests") or {}).get("cpu", 0)) or 0
                used[node] = used.get(node, 0) + cpu
    for n in nodes:
        name = n["metadata"]["name"]
        cap = quantity.parse(((n.get("status") or {}).get("allocatable") or {}).get("cpu", 0)) or 0
        if used.get(name, 0) > cap + 1e-9:
            return f"node {name} has {used[name]:g} CPU of pods bound for {cap:g} allocatable"
    return None


# Checked at every observation (README.md, "Invariants"); a broken one stays broken.
INVARIANTS = {
    "podgroup-not-pending-while-pod-runs": _podgroup_not_pending_while_pod_runs,
    "node-capacity": _node_capacity,
}


def in_flight(pods_by_ns):
    """Pods the simulated kubelet has yet to act on: bound but not started, or being deleted
    (unless a finalizer holds them on purpose). A cluster with such pods has not settled."""
    n = 0
    for pods in pods_by_ns.values():
        for pod in pods:
            meta = pod["metadata"]
            if meta.get("deletionTimestamp"):
                n += not meta.get("finalizers")
            elif (pod.get("spec") or {}).get("nodeName") and (pod.get("status") or {}).get("phase", "Pending") == "Pending":
                n += 1
    return n


# Optional fact families a scenario asks for with `details:` (README.md, "Facts").
DETAILS = ("job-objects", "pod-restarts", "placement", "storage")
# Volume reasons as kube-scheduler words them (Tephra reports the same), found in a pod's
# PodScheduled message whatever else the two schedulers write around them.
VOLUME_REASONS = (
    re.compile(r'persistentvolumeclaim "[^"]+" not found'),
    re.compile(r"pod has unbound immediate PersistentVolumeClaims"),
    re.compile(r"didn't find available persistent volumes to bind"),
    re.compile(r"didn't match PersistentVolume's node affinity"),
    re.compile(r"had no available volume zone"),
    re.compile(r"PersistentVolumeClaim with ReadWriteOncePod access mode already in-use"),
    re.compile(r"exceed max volume count"),
)
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
# The node label whose values `placement` reports (node names differ between the two sides).
DOMAIN_LABEL = "compat.tephra.dev/domain"
_KEY_MATERIAL = ("id_rsa", "id_rsa.pub", "authorized_keys")


def _env_source(entry):
    if "value" in entry:
        return entry["value"]
    src = entry.get("valueFrom") or {}
    for kind, ref in sorted(src.items()):
        ref = ref or {}
        where = ref.get("fieldPath") or ref.get("resource") or f"{ref.get('name', '')}/{ref.get('key', '')}"
        return f"({kind} {where})"
    return ""


def _observe_job_objects(state, ns, actual, pods, secrets, services, policies):
    """What Volcano's job plugins write: the pods' env, ports, mounts and DNS names, and the
    Secrets, Services and NetworkPolicies of the namespace (docs/compatibility.md §2.6). The
    cluster's namespace `actual` reads as the scenario's `ns` in the values."""
    before = set(state)
    for pod in pods:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        if not (meta.get("labels") or {}).get("volcano.sh/job-name"):
            continue
        k = f"podspec/{ns}/{meta['name']}"
        state[f"{k}.hostname"] = spec.get("hostname", "")
        state[f"{k}.subdomain"] = spec.get("subdomain", "")
        for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            ck = f"{k}.{c['name']}"
            for e in c.get("env") or []:
                state[f"{ck}.env.{e['name']}"] = _env_source(e)
            state[f"{ck}.ports"] = ",".join(sorted(
                f"{p.get('name', '')}:{p.get('containerPort')}/{p.get('protocol', 'TCP')}"
                for p in c.get("ports") or []))
            state[f"{ck}.mounts"] = ",".join(sorted(
                f"{m.get('mountPath')}{'[' + m['subPath'] + ']' if m.get('subPath') else ''}"
                f"{' ro' if m.get('readOnly') else ''}"
                for m in c.get("volumeMounts") or []
                if not m.get("mountPath", "").startswith("/var/run/secrets/kubernetes.io/")))
    for sec in secrets:
        if sec.get("type") == "kubernetes.io/service-account-token":
            continue
        for key, value in (sec.get("data") or {}).items():
            text = base64.b64decode(value).decode(errors="replace")
            if key in _KEY_MATERIAL:
                text = f"({len(text.splitlines())} lines)"
            state[f"secret/{ns}/{sec['metadata']['name']}.{key}"] = text
    for svc in services:
        spec = svc.get("spec") or {}
        k = f"service/{ns}/{svc['metadata']['name']}"
        state[f"{k}.clusterIP"] = spec.get("clusterIP", "")
        state[f"{k}.ports"] = ",".join(sorted(
            f"{p.get('name', '')}:{p.get('port')}->{p.get('targetPort')}/{p.get('protocol', 'TCP')}"
            for p in spec.get("ports") or []))
        state[f"{k}.selector"] = ",".join(f"{a}={b}" for a, b in sorted((spec.get("selector") or {}).items()))
        state[f"{k}.publishNotReadyAddresses"] = bool(spec.get("publishNotReadyAddresses"))
    for np in policies:
        spec = np.get("spec") or {}
        k = f"networkpolicy/{ns}/{np['metadata']['name']}"
        state[f"{k}.podSelector"] = json.dumps(spec.get("podSelector"), sort_keys=True)
        state[f"{k}.ingress"] = json.dumps(spec.get("ingress"), sort_keys=True)
        state[f"{k}.policyTypes"] = ",".join(spec.get("policyTypes") or [])
    for key in set(state) - before:
        if isinstance(state[key], str):
            state[key] = state[key].replace(actual, ns)


def _observe_pod_restarts(state, ns, pods, group_of):
    """Container restarts the kubelet made in place, summed over each pod's own group."""
    for pod in pods:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            continue
        k = f"pods/{ns}/{group_of[meta['name']]}.restarts"
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        state[k] = state.get(k, 0) + sum(c.get("restartCount", 0) for c in statuses)


def _observe_placement(state, ns, pods, pgs, group_of, nodes):
    """Where each group's bound pods are, as the DOMAIN_LABEL values of their nodes, and the
    HyperNode the scheduler says each PodGroup occupies (network topology)."""
    domain = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(DOMAIN_LABEL, "?")
              for n in nodes}
    seen = {}
    for pod in pods:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        if meta.get("deletionTimestamp") or not spec.get("nodeName"):
            continue
        group = group_of[meta["name"]]  # job:NAME/TASK for a Job's pod: the job too
        groups = {group, group.split("/")[0]}
        partition = (meta.get("labels") or {}).get("volcano.sh/partition-id")
        if partition is not None:  # and its partition (a sub-gang)
            groups.add(f"{group}/partition-{partition}")
        for g in groups:
            seen.setdefault(g, set()).add(domain.get(spec["nodeName"], "?"))
    for g, domains in seen.items():
        state[f"pods/{ns}/{g}.domains"] = ",".join(sorted(domains))
    ids = _podgroup_ids(pgs)
    for pg in pgs:
        hn = (pg["metadata"].get("annotations") or {}).get("volcano.sh/job-allocated-hypernode")
        if hn:
            state[f"pg/{ns}/{ids[pg['metadata']['name']]}.allocatedHyperNode"] = hn


def _mounts_claims(pod):
    return any("persistentVolumeClaim" in v or "ephemeral" in v
               for v in (pod.get("spec") or {}).get("volumes") or [])


def _volume_reasons(message):
    return sorted({m.group(0) for r in VOLUME_REASONS for m in [r.search(message or "")] if m})


def _observe_storage(state, ns, pods, claims, volumes, local):
    """Claims, and the pods that mount them, of namespace `ns`; `local` turns a cluster's node
    or PV name into the scenario's."""
    by_name = {v["metadata"]["name"]: v for v in volumes}
    for c in claims:
        meta, spec, status = c["metadata"], c.get("spec") or {}, c.get("status") or {}
        k = f"pvc/{ns}/{meta['name']}"
        phase = status.get("phase", "Pending")
        state[k + ".phase"] = phase
        state[f"pvcs/{ns}.{phase}"] = state.get(f"pvcs/{ns}.{phase}", 0) + 1
        volume = spec.get("volumeName") or ""
        pv = by_name.get(volume) or {}
        provisioned = PROVISIONED_BY in ((pv.get("metadata") or {}).get("annotations") or {})
        state[k + ".volume"] = "(provisioned)" if provisioned else local(volume)
        state[k + ".node"] = local((meta.get("annotations") or {}).get(SELECTED_NODE, ""))
    nodes, why = set(), set()
    for pod in pods:
        if not _mounts_claims(pod) or pod["metadata"].get("deletionTimestamp"):
            continue
        k = f"pod/{ns}/{pod['metadata']['name']}"
        node = (pod.get("spec") or {}).get("nodeName") or ""
        state[k + ".node"] = local(node)
        cond = next((c for c in (pod.get("status") or {}).get("conditions") or []
                     if c.get("type") == "PodScheduled"), {})
        state[k + ".scheduled"] = f"{cond.get('status', '')}/{cond.get('reason', '')}"
        reasons = _volume_reasons(cond.get("message")) if not node else []
        state[k + ".why"] = "; ".join(reasons)
        if node:
            nodes.add(local(node))
        why.update(reasons)
    state[f"storage/{ns}.nodes"] = ",".join(sorted(nodes))
    state[f"storage/{ns}.why"] = "; ".join(sorted(why))


def _observe_volumes(state, volumes, local, scenario_namespace):
    """The PVs the scenario made (their cluster names end in the run's suffix)."""
    for v in volumes:
        name = local(v["metadata"]["name"])
        if name == v["metadata"]["name"]:
            continue  # provisioned, or not this run's
        ref = (v.get("spec") or {}).get("claimRef") or {}
        state[f"pv/{name}.phase"] = (v.get("status") or {}).get("phase", "")
        state[f"pv/{name}.claim"] = (f"{scenario_namespace(ref.get('namespace', ''))}/{ref['name']}"
                                     if ref.get("name") else "")


def observe(cluster, namespaces, event_reasons=(), invariants=(), details=(), suffix=""):
    """(facts, pods in flight) of `cluster`; `namespaces` maps the scenario's namespace names
    (used in the facts) to the cluster's, and `suffix` ends the cluster's names of the
    scenario's nodes and PVs. Raises OSError when the API server cannot be reached."""
    state = {}
    reasons = set(event_reasons)
    pods_by_ns, pgs_by_ns = {}, {}

    def local(name):
        return name[:-len(suffix)] if suffix and name.endswith(suffix) else name
    volumes = _list(cluster, VOLUME) if "storage" in details else []
    for ns, actual in namespaces.items():
        # Pods first: a pod seen Running still runs when the PodGroups are listed a moment
        # later, so a group found Pending then was Pending while it ran. The other order pairs
        # a group's earlier phase with its pod's later one (podgroup-not-pending-while-pod-runs).
        pods = pods_by_ns[ns] = _list(cluster, POD, actual)
        pgs = pgs_by_ns[ns] = _list(cluster, PODGROUP, actual)
        _observe_jobs(state, ns, _list(cluster, VCJOB, actual))
        pg_ids = _observe_podgroups(state, ns, pgs)
        group_of = _observe_pods(state, ns, pods, _list(cluster, REPLICASET, actual))
        for xpg in _list(cluster, XPODGROUP, actual):
            state[f"xpg/{ns}/{xpg['metadata']['name']}.phase"] = (xpg.get("status") or {}).get("phase", "")
        for cm in _list(cluster, CONFIGMAP, actual):
            if cm["metadata"]["name"] == "kube-root-ca.crt":
                continue
            for key, value in (cm.get("data") or {}).items():
                state[f"configmap/{ns}/{cm['metadata']['name']}.{key}"] = value
        if reasons:
            _observe_events(state, ns, _list(cluster, EVENT, actual), reasons, group_of, pg_ids)
        if "placement" in details:
            _observe_placement(state, ns, pods, pgs, group_of, _list(cluster, NODE))
        if "pod-restarts" in details:
            _observe_pod_restarts(state, ns, pods, group_of)
        if "storage" in details:
            _observe_storage(state, ns, pods, _list(cluster, CLAIM, actual), volumes, local)
        if "job-objects" in details:
            _observe_job_objects(state, ns, actual, pods, _list(cluster, SECRET, actual),
                                 _list(cluster, SERVICE, actual),
                                 _list(cluster, NETWORKPOLICY, actual))
    _observe_queues(state, _list(cluster, QUEUE))
    if "storage" in details:
        scenario_ns = {actual: ns for ns, actual in namespaces.items()}
        _observe_volumes(state, volumes, local, lambda n: scenario_ns.get(n, n))
    nodes = _list(cluster, NODE) if invariants else []
    for name in invariants:
        broken = INVARIANTS[name](pods_by_ns, pgs_by_ns, nodes)
        state[f"invariant/{name}"] = f"broken: {broken}" if broken else "held"
    return state, in_flight(pods_by_ns)


def _list(cluster, api_kind, namespace=None):
    items = cluster.list(*api_kind, namespace=namespace)
    if items is False or not isinstance(items, list):
        raise OSError(f"listing {api_kind[1]} in {namespace or 'the cluster'}: {items!r}")
    return items
