"""Runs one scenario's timeline on one side and collects the facts of each checkpoint."""
import copy
import hashlib
import json
import re
import time

from . import observe

POLL = 0.5  # seconds between observations while settling or waiting
UID_REF = re.compile(r"^\$\{uid:([A-Za-z]+)/([-a-z0-9.]+)\}$")  # ${uid:Job/name} in a manifest


class SideResult:
    def __init__(self, side):
        self.side = side
        self.checkpoints = {}   # checkpoint name -> {fact: value}
        self.unsettled = []     # checkpoints that did not settle within their timeout
        self.messages = {}      # admission fact -> the server's message (for the report)
        self.error = None       # a failure that stopped the run (text)
        self.seconds = 0.0
        self.setup_seconds = 0.0


class Names:
    """The cluster's names for a scenario's namespaces and nodes, unique to one run of it: kwok
    keeps state per node and per pod name and mixes a new node or pod up with an earlier one of
    the same name (it then never runs its pods). Facts use the scenario's names."""

    def __init__(self, scenario, serial):
        self.serial = serial
        self.namespaces = {ns: f"{ns}-{serial}" for ns in scenario.namespaces}

    def namespace(self, ns):
        return self.namespaces.get(ns, ns)

    def node(self, name):
        return f"{name}-{self.serial}"

    # PVs are cluster-scoped and outlive a run a while (their protection finalizers): each run
    # gets its own.
    volume = node

    @property
    def suffix(self):
        return f"-{self.serial}"


def node_objects(scenario, names):
    nodes = []
    for g in scenario.nodes:
        for i in range(g["count"]):
            name = names.node(f"{g['prefix']}-{i}")
            capacity = {"cpu": g["cpu"], "memory": g["memory"], "pods": g["pods"],
                        **{k: str(v) for k, v in g["resources"].items()}}
            labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                      "kubernetes.io/arch": "amd64", "type": "kwok", **g["labels"]}
            spec = {}
            if g["taints"]:
                spec["taints"] = g["taints"]
            if g["unschedulable"]:
                spec["unschedulable"] = True
            nodes.append({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": name, "labels": labels,
                                       "annotations": {"kwok.x-k8s.io/node": "fake",
                                                       "node.alpha.kubernetes.io/ttl": "0"}},
                          "spec": spec, "status": {"capacity": capacity, "allocatable": capacity}})
    return nodes


def _digest(state):
    return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()


def _matches(state, until):
    return all(state.get(k) == v for k, v in until.items())


class Timeline:
    def __init__(self, side, scenario, log):
        self.side, self.scenario, self.log = side, scenario, log
        self.cluster = side.cluster
        self.result = SideResult(side.kind)
        self.facts = {}  # admission and wait facts, carried into every later checkpoint
        self.broken = {}  # invariant fact -> its first violation
        self.suspect = {}  # invariant fact -> a violation seen in the last observation only
        self.in_flight = 0
        self.names = None  # Names of this run

    def observe(self):
        """The facts now; self.in_flight says how many pods the simulated kubelet owes."""
        state, self.in_flight = observe.observe(self.cluster, self.names.namespaces,
                                                self.scenario.events, self.scenario.invariants,
                                                self.scenario.details, self.names.suffix)
        for key in [k for k in state if k.startswith("invariant/")]:
            # Sticky: an invariant broken once in the scenario stays broken. A violation counts
            # once the next observation, at least POLL later, shows the same one: two daemons'
            # writes land some milliseconds apart (a bare pod's PodGroup is created, then its
            # status written), which is no broken promise. What a user could see persists.
            if self.broken.get(key):
                state[key] = self.broken[key]
            elif state[key] == "held":
                self.suspect.pop(key, None)
            elif self.suspect.get(key) == state[key]:
                self.broken[key] = state[key]
            else:
                self.suspect[key] = state[key]
                state[key] = "held"
        return state

    def run(self):
        t0 = time.time()
        try:
            self.names = self.side.next_names(self.scenario)
            self.side.reset(self.scenario, self.names, node_objects(self.scenario, self.names),
                            self.scenario.queues)
            if self.scenario.provisioner:
                self.side.start_provisioner(self.scenario.provisioner)
            self.result.setup_seconds = time.time() - t0
            for step in self.scenario.steps:
                self._step(step)
        except Exception as e:  # a side that breaks must not take the other side's run down
            self.result.error = f"{type(e).__name__}: {e}"
        finally:
            self.side.stop_provisioner()
        self.result.seconds = time.time() - t0
        return self.result

    # ---- steps -----------------------------------------------------------------------------

    def _step(self, step):
        i = step["index"]
        if "apply" in step:
            for obj in step["apply"]:
                self._apply(i, copy.deepcopy(obj), step)
        elif "patch" in step:
            p = step["patch"]
            api, ns = self._target(p)
            got = self.cluster.patch(api, p["kind"], ns, self._name(p["kind"], p["name"]), p["patch"],
                                     p.get("type", "merge"))
            self._admission(f"admission/step{i}/patch/{p['kind']}/{p['name']}", got)
        elif "delete" in step:
            d = step["delete"]
            api, ns = self._target(d)
            for name in self._select(api, d, ns):
                got = self.cluster.delete(api, d["kind"], ns, name, grace=d.get("grace"))
                if not (got or got.status == 404):
                    self._admission(f"admission/step{i}/delete/{d['kind']}/{d.get('name', name)}", got)
        elif "annotate" in step:
            a = step["annotate"]
            api, ns = self._target(a)
            for name in self._select(api, a, ns):
                self.cluster.patch(api, a["kind"], ns, name, {"metadata": {"annotations": a["annotations"]}})
        elif "sleep" in step:
            time.sleep(step["sleep"])
        elif "settle" in step:
            self._settle(step["settle"]["quiet"], step["settle"]["timeout"])
        elif "wait" in step:
            w = step["wait"]
            deadline = time.time() + w["timeout"]
            reached = False
            while time.time() < deadline:
                if _matches(self.observe(), w["until"]):
                    reached = True
                    break
                time.sleep(POLL)
            self.facts[f"wait/step{i}"] = "reached" if reached else "timed out"
        elif "checkpoint" in step:
            cp = step["checkpoint"]
            state, settled = self._settle(cp.quiet, cp.timeout)
            if not settled:
                self.result.unsettled.append(cp.name)
            state.update(self.facts)
            self.result.checkpoints[cp.name] = state

    _KNOWN_API = {"Job": "batch.volcano.sh/v1alpha1", "PodGroup": "scheduling.volcano.sh/v1beta1",
                  "Queue": "scheduling.volcano.sh/v1beta1", "Deployment": "apps/v1",
                  "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "PriorityClass": "scheduling.k8s.io/v1"}

    def _api_version(self, kind):
        return self._KNOWN_API.get(kind, "v1")

    def _name(self, kind, name):
        if kind in ("Node", "CSINode"):
            return self.names.node(name)
        return self.names.volume(name) if kind == "PersistentVolume" else name

    def _translate_storage(self, obj):
        """A storage object's references to the scenario's nodes, PVs and namespaces, in the
        cluster's names."""
        kind, spec = obj["kind"], obj.get("spec") or {}

        def hostnames(terms, key_field):
            for term in terms or []:
                for e in term.get(key_field) or []:
                    if e.get("key") == "kubernetes.io/hostname":
                        e["values"] = [self.names.node(v) for v in e.get("values") or []]
        if kind == "PersistentVolume":
            obj["metadata"]["name"] = self.names.volume(obj["metadata"]["name"])
            required = ((spec.get("nodeAffinity") or {}).get("required") or {})
            hostnames(required.get("nodeSelectorTerms"), "matchExpressions")
            if spec.get("claimRef"):
                spec["claimRef"]["namespace"] = self.names.namespace(
                    spec["claimRef"].get("namespace") or self.scenario.namespaces[0])
        elif kind == "PersistentVolumeClaim" and spec.get("volumeName"):
            spec["volumeName"] = self.names.volume(spec["volumeName"])
        elif kind == "StorageClass":
            hostnames(obj.get("allowedTopologies"), "matchLabelExpressions")
        elif kind == "CSINode":
            obj["metadata"]["name"] = self.names.node(obj["metadata"]["name"])
            for d in spec.get("drivers") or []:
                d["nodeID"] = self.names.node(d["nodeID"]) if d.get("nodeID") else obj["metadata"]["name"]

    def _target(self, spec):
        """(apiVersion, namespace) of the object(s) a patch/delete/annotate step names."""
        api = spec.get("apiVersion") or self._api_version(spec["kind"])
        return api, self._namespace(api, spec["kind"], spec.get("namespace"))

    def _namespace(self, api_version, kind, namespace):
        """The cluster's namespace for an object the scenario places in `namespace` (its own
        name for it; default its first), None for cluster-scoped kinds."""
        found = self.cluster.resource(api_version, kind)
        if found is not None and not found[1]:
            return None
        return self.names.namespace(namespace or self.scenario.namespaces[0])

    def _select(self, api_version, spec, ns):
        """Names of the objects a delete/annotate step acts on: by name, or the first `count`
        (by name) of those matching the selector that are not finished or going away."""
        if "name" in spec:
            return [self._name(spec["kind"], spec["name"])]
        items = self.cluster.list(api_version, spec["kind"], ns, selector=spec["selector"]) or []
        live = [o for o in items if not o["metadata"].get("deletionTimestamp")
                and (o.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        names = sorted(o["metadata"]["name"] for o in live)
        return names[:int(spec["count"])] if "count" in spec else names

    def _uids(self, value, ns):
        """`value` with every "${uid:KIND/NAME}" string replaced by that object's UID (what a
        Command's target or an ownerReference needs), looked up in namespace `ns`."""
        if isinstance(value, dict):
            return {k: self._uids(v, ns) for k, v in value.items()}
        if isinstance(value, list):
            return [self._uids(v, ns) for v in value]
        m = UID_REF.match(value) if isinstance(value, str) else None
        if not m:
            return value
        api = self._api_version(m.group(1))
        found = self.cluster.resource(api, m.group(1))
        got = self.cluster.get(api, m.group(1), ns if found and found[1] else None, m.group(2))
        return got["metadata"]["uid"] if got else value

    def _apply(self, i, obj, step):
        api, kind = obj["apiVersion"], obj["kind"]
        meta = obj["metadata"]
        ns = self._namespace(api, kind, meta.get("namespace") or step.get("namespace"))
        if ns:
            meta["namespace"] = ns
        name = meta["name"]  # the scenario's name (a node's differs in the cluster)
        key = f"admission/step{i}/{kind}/{name}"
        obj = self._uids(obj, meta.get("namespace"))
        meta = obj["metadata"]
        if kind == "Node":
            meta["name"] = self.names.node(meta["name"])
            meta.setdefault("labels", {})["kubernetes.io/hostname"] = meta["name"]
        self._translate_storage(obj)
        got = self.cluster.create(obj)
        if not got and got.status == 409:
            current = self.cluster.get(api, kind, ns, meta["name"])
            if current:
                meta["resourceVersion"] = current["metadata"]["resourceVersion"]
                got = self.cluster.replace(obj)
        self._admission(key, got)
        if got:
            self.side.record_created(obj)
            if kind == "CustomResourceDefinition":
                self._wait_established(meta["name"])
        field = (step.get("fields") or {}).get(name)
        if field and not got:
            self.facts[f"{key}.field-named"] = field in (got.message or "")

    def _admission(self, key, got):
        self.facts[key] = "accepted" if got else "refused"
        if not got:
            self.result.messages[key] = got.message

    def _wait_established(self, name):
        for _ in range(120):
            crd = self.cluster.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, name)
            if crd and any(c["type"] == "Established" and c["status"] == "True"
                           for c in (crd.get("status") or {}).get("conditions") or []):
                self.cluster.refresh_discovery()
                return
            time.sleep(0.25)

    def _settle(self, quiet, timeout):
        """Observes until nothing changed for `quiet` seconds and no pod waits for the
        simulated kubelet; (state, settled)."""
        deadline = time.time() + timeout
        state = self.observe()
        last, since = _digest(state), time.time()
        while True:
            if time.time() - since >= quiet and not self.in_flight:
                return state, True
            if time.time() >= deadline:
                return state, False
            time.sleep(POLL)
            state = self.observe()
            d = _digest(state)
            if d != last:
                last, since = d, time.time()
