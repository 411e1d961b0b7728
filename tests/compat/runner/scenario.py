"""Scenario files (tests/compat/scenarios/*.yaml): loading and checking. Every mistake is
reported with the file and the field, e.g. `steps[3].delete.kind: required`. README.md
documents the format."""
import copy
import hashlib
import json
import os
import re

import yaml

from . import observe

DEFAULT_NAMESPACE = "compat"
ORACLES = ("volcano", "stated")
ACTIONS = ("apply", "apply_file", "patch", "delete", "annotate", "sleep", "settle", "wait",
           "checkpoint")
MARK_FIELDS = ("expect", "ignore", "tolerance", "known", "intentional")
# Facts that describe placement or bookkeeping rather than outcome: compared only when a
# scenario asks (`compare:`).
DEFAULT_IGNORE = ("pods/*.nodes",)
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ScenarioError(Exception):
    pass


class Mark:
    """A `known:` or `intentional:` entry: the keys it covers and what Tephra shows there.
    `common` marks come from common.yaml and apply to every scenario."""

    def __init__(self, kind, label, keys, tephra, common=False, when=None):
        self.kind, self.label, self.keys, self.tephra = kind, label, keys, tephra
        self.common = common
        self.when = when or {}  # side -> glob its value must match for the mark to apply


class Checkpoint:
    def __init__(self, name, quiet, timeout, expect, ignore, tolerance, compare, known, intentional):
        self.name, self.quiet, self.timeout = name, quiet, timeout
        self.expect, self.ignore, self.tolerance, self.compare = expect, ignore, tolerance, compare
        self.known, self.intentional = known, intentional


class Scenario:
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def checkpoints(self):
        return [s["checkpoint"] for s in self.steps if "checkpoint" in s]


class _Checker:
    def __init__(self, path):
        self.path = path

    def fail(self, field, rule):
        raise ScenarioError(f"{self.path}: {field}: {rule}")

    def dict(self, value, field, allowed=None, required=()):
        if not isinstance(value, dict):
            self.fail(field, f"must be a mapping, not {type(value).__name__}")
        for key in required:
            if key not in value:
                self.fail(f"{field}.{key}" if field else key, "required")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    self.fail(f"{field}.{key}" if field else key,
                              f"unknown field (allowed: {', '.join(allowed)})")
        return value

    def list(self, value, field):
        if not isinstance(value, list):
            self.fail(field, f"must be a list, not {type(value).__name__}")
        return value

    def str(self, value, field):
        if not isinstance(value, str) or not value:
            self.fail(field, "must be a non-empty string")
        return value

    def number(self, value, field, minimum=0):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
            self.fail(field, f"must be a number >= {minimum}")
        return value

    def strings(self, value, field):
        return [self.str(v, f"{field}[{i}]") for i, v in enumerate(self.list(value, field))]


def _marks(c, value, field, kind, common=False):
    label_field = "issue" if kind == "known" else "reason"
    marks = []
    for i, m in enumerate(c.list(value, field)):
        f = f"{field}[{i}]"
        c.dict(m, f, allowed=(label_field, "keys", "tephra", "when", "note"), required=(label_field, "keys"))
        label = str(m[label_field])
        tephra = c.dict(m.get("tephra") or {}, f"{f}.tephra")
        when = c.dict(m.get("when") or {}, f"{f}.when", allowed=("volcano", "tephra"))
        for side, glob in when.items():
            c.str(glob, f"{f}.when.{side}")
        marks.append(Mark(kind, label, c.strings(m["keys"], f"{f}.keys"), tephra, common, when))
    return marks


class Common:
    """common.yaml: marks, ignores and tolerances for every scenario compared with Volcano."""

    def __init__(self, known=(), intentional=(), ignore=(), tolerance=None):
        self.known, self.intentional = list(known), list(intentional)
        self.ignore, self.tolerance = list(ignore), dict(tolerance or {})


def load_common(path):
    if not os.path.exists(path):
        return Common()
    c = _Checker(os.path.basename(path))
    try:
        with open(path) as f:
            raw = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
        c.fail("file", f"not YAML: {e}")
    c.dict(raw, "", allowed=("known", "intentional", "ignore", "tolerance"))
    return Common(
        known=_marks(c, raw.get("known") or [], "known", "known", common=True),
        intentional=_marks(c, raw.get("intentional") or [], "intentional", "intentional", common=True),
        ignore=c.strings(raw.get("ignore") or [], "ignore"),
        tolerance={k: c.number(v, f"tolerance.{k}")
                   for k, v in c.dict(raw.get("tolerance") or {}, "tolerance").items()})


def _checkpoint(c, step, field, defaults):
    allowed = ("checkpoint", "quiet", "timeout", "compare") + MARK_FIELDS
    c.dict(step, field, allowed=allowed)
    name = c.str(step["checkpoint"], f"{field}.checkpoint")
    tolerance = dict(defaults["tolerance"])
    for k, v in c.dict(step.get("tolerance") or {}, f"{field}.tolerance").items():
        tolerance[k] = c.number(v, f"{field}.tolerance.{k}")
    return Checkpoint(
        name=name,
        quiet=c.number(step.get("quiet", defaults["quiet"]), f"{field}.quiet", 1),
        timeout=c.number(step.get("timeout", defaults["timeout"]), f"{field}.timeout", 1),
        expect=c.dict(step.get("expect") or {}, f"{field}.expect"),
        ignore=defaults["ignore"] + c.strings(step.get("ignore") or [], f"{field}.ignore"),
        tolerance=tolerance,
        compare=defaults["compare"] + c.strings(step.get("compare") or [], f"{field}.compare"),
        known=defaults["known"] + _marks(c, step.get("known") or [], f"{field}.known", "known"),
        intentional=defaults["intentional"] + _marks(
            c, step.get("intentional") or [], f"{field}.intentional", "intentional"))


def _objects(c, value, field):
    """Manifests of an `apply` step: a YAML string (one or more documents) or a list."""
    if isinstance(value, str):
        try:
            docs = [d for d in yaml.safe_load_all(value) if d is not None]
        except yaml.YAMLError as e:
            c.fail(field, f"not YAML: {e}")
    else:
        docs = c.list(value, field)
    for i, d in enumerate(docs):
        c.dict(d, f"{field}[{i}]", required=("apiVersion", "kind", "metadata"))
        c.dict(d["metadata"], f"{field}[{i}].metadata", required=("name",))
    return docs


def _step(c, step, i, root, defaults, seen_checkpoints):
    field = f"steps[{i}]"
    c.dict(step, field)
    actions = [a for a in ACTIONS if a in step]
    if len(actions) != 1:
        c.fail(field, f"must have exactly one of {', '.join(ACTIONS)}")
    action = actions[0]
    f = f"{field}.{action}"
    out = {"index": i}
    if action == "checkpoint":
        cp = _checkpoint(c, step, field, defaults)
        if cp.name in seen_checkpoints:
            c.fail(f, f"checkpoint '{cp.name}' appears twice")
        seen_checkpoints.add(cp.name)
        out["checkpoint"] = cp
        return out
    if action in ("apply", "apply_file"):
        c.dict(step, field, allowed=(action, "fields", "namespace"))
        if action == "apply":
            objects = _objects(c, step["apply"], f)
        else:
            rel = c.str(step["apply_file"], f)
            full = os.path.join(root, rel)
            if not os.path.isfile(full):
                c.fail(f, f"no file {rel} in the repository")
            with open(full) as fh:
                objects = _objects(c, fh.read(), f)
        out["apply"] = objects
        out["fields"] = c.dict(step.get("fields") or {}, f"{field}.fields")
        out["namespace"] = step.get("namespace")
        return out
    if action == "patch":
        c.dict(step, field, allowed=("patch",))
        p = c.dict(step["patch"], f, allowed=("apiVersion", "kind", "name", "namespace", "patch", "type"),
                   required=("kind", "name", "patch"))
        if p.get("type", "merge") not in ("merge", "strategic", "json"):
            c.fail(f"{f}.type", "must be merge, strategic or json")
        out["patch"] = p
        return out
    if action in ("delete", "annotate"):
        c.dict(step, field, allowed=(action,))
        allowed = ("apiVersion", "kind", "name", "namespace", "selector", "count", "grace")
        if action == "annotate":
            allowed = allowed[:-1] + ("annotations",)
        required = ("kind", "annotations") if action == "annotate" else ("kind",)
        p = c.dict(step[action], f, allowed=allowed, required=required)
        if ("name" in p) == ("selector" in p):
            c.fail(f, "needs exactly one of name and selector")
        if "count" in p:
            c.number(p["count"], f"{f}.count", 1)
        out[action] = p
        return out
    if action == "sleep":
        c.dict(step, field, allowed=("sleep",))
        out["sleep"] = c.number(step["sleep"], f, 0)
        return out
    if action == "settle":
        c.dict(step, field, allowed=("settle",))
        s = c.dict(step["settle"] or {}, f, allowed=("quiet", "timeout"))
        out["settle"] = {"quiet": c.number(s.get("quiet", defaults["quiet"]), f"{f}.quiet", 1),
                         "timeout": c.number(s.get("timeout", defaults["timeout"]), f"{f}.timeout", 1)}
        return out
    if action == "wait":
        c.dict(step, field, allowed=("wait",))
        w = c.dict(step["wait"], f, allowed=("until", "timeout"), required=("until",))
        out["wait"] = {"until": c.dict(w["until"], f"{f}.until"),
                       "timeout": c.number(w.get("timeout", 60), f"{f}.timeout", 1)}
        return out
    raise AssertionError(action)


def _node_groups(c, value):
    groups = []
    for i, g in enumerate(c.list(value, "nodes")):
        f = f"nodes[{i}]"
        c.dict(g, f, allowed=("count", "prefix", "cpu", "memory", "pods", "labels", "taints",
                              "unschedulable", "resources"), required=("count",))
        c.number(g["count"], f"{f}.count", 1)
        prefix = g.get("prefix", "node")
        if not NAME.match(prefix):
            c.fail(f"{f}.prefix", "must be a DNS label")
        groups.append({"count": int(g["count"]), "prefix": prefix, "cpu": str(g.get("cpu", 8)),
                       "memory": str(g.get("memory", "32Gi")), "pods": str(g.get("pods", 110)),
                       "labels": c.dict(g.get("labels") or {}, f"{f}.labels"),
                       "taints": c.list(g.get("taints") or [], f"{f}.taints"),
                       "unschedulable": bool(g.get("unschedulable", False)),
                       "resources": c.dict(g.get("resources") or {}, f"{f}.resources")})
    prefixes = [g["prefix"] for g in groups]
    if len(set(prefixes)) != len(prefixes):
        c.fail("nodes", "each group needs its own prefix")
    return groups


def _queues(c, value):
    queues = []
    for i, q in enumerate(c.list(value, "queues")):
        f = f"queues[{i}]"
        c.dict(q, f, required=("name",))
        name = c.str(q["name"], f"{f}.name")
        if name in ("root", "default"):
            c.fail(f"{f}.name", f"'{name}' exists on both sides already; patch it in a step instead")
        spec = {k: v for k, v in q.items() if k != "name"}
        queues.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                       "metadata": {"name": name}, "spec": spec})
    return queues


def _known_names(c, value, field, what, known):
    """The list of names in `field`, each one of `known`."""
    names = c.strings(value, field)
    for i, n in enumerate(names):
        if n not in known:
            c.fail(f"{field}[{i}]", f"unknown {what} '{n}' (known: {', '.join(known)})")
    return names


def semantic_digest(raw):
    """A digest of what decides the outcome on Volcano (nodes, queues, configuration,
    timeline actions), not of descriptions or comparison marks: a recording stays valid while
    only those change."""
    material = {k: raw[k] for k in ("nodes", "queues", "scheduler", "namespaces", "events",
                                    "invariants", "details", "provisioner") if k in raw}
    steps = []
    for step in raw.get("steps") or []:
        if isinstance(step, dict) and "checkpoint" in step:
            steps.append({k: step.get(k) for k in ("checkpoint", "quiet", "timeout")})
        else:
            steps.append(step)
    material["steps"] = steps
    text = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load(path, root, common=None):
    """The Scenario in `path`; `root` is the repository (for apply_file); `common` the
    common.yaml marks (load_common)."""
    common = common or Common()
    name = os.path.splitext(os.path.basename(path))[0]
    c = _Checker(os.path.relpath(path, root) if path.startswith(root) else path)
    if not NAME.match(name):
        c.fail("file name", "must be a DNS label (lower-case letters, digits, '-') plus .yaml")
    try:
        with open(path) as f:
            raw = yaml.safe_load(f)
    except yaml.YAMLError as e:
        c.fail("file", f"not YAML: {e}")
    c.dict(raw, "", allowed=("description", "issue", "oracle", "rules", "nodes", "queues",
                             "scheduler", "namespaces", "events", "invariants", "details",
                             "compare", "steps", "provisioner", "kube-scheduler") + MARK_FIELDS,
           required=("description", "nodes", "steps"))
    oracle = raw.get("oracle", "volcano")
    if oracle not in ORACLES:
        c.fail("oracle", f"must be one of {', '.join(ORACLES)}")
    if oracle == "stated" and not raw.get("rules"):
        c.fail("rules", "required with oracle: stated (name the documented rules the scenario states)")
    namespaces = c.strings(raw.get("namespaces") or [DEFAULT_NAMESPACE], "namespaces")
    for i, ns in enumerate(namespaces):
        if not NAME.match(ns) or ns in ("default", "kube-system", "tephra-system", "volcano-system"):
            c.fail(f"namespaces[{i}]", f"'{ns}' cannot be a scenario namespace")
    scheduler = raw.get("scheduler")
    if scheduler is not None:
        c.str(scheduler, "scheduler")
        try:
            conf = yaml.safe_load(scheduler)
        except yaml.YAMLError as e:
            c.fail("scheduler", f"not YAML: {e}")
        c.dict(conf, "scheduler", required=("actions", "tiers"))
    defaults = {
        "quiet": 4, "timeout": 90,
        "ignore": list(DEFAULT_IGNORE) + common.ignore + c.strings(raw.get("ignore") or [], "ignore"),
        "tolerance": {**common.tolerance, **{
            k: c.number(v, f"tolerance.{k}")
            for k, v in c.dict(raw.get("tolerance") or {}, "tolerance").items()}},
        "compare": c.strings(raw.get("compare") or [], "compare"),
        # The scenario's own marks first: they are more specific than the common ones.
        "known": _marks(c, raw.get("known") or [], "known", "known") + common.known,
        "intentional": _marks(c, raw.get("intentional") or [], "intentional", "intentional")
        + common.intentional,
    }
    if raw.get("expect"):
        c.fail("expect", "belongs to a checkpoint step")
    seen = set()
    steps = [_step(c, s, i, root, defaults, seen) for i, s in enumerate(c.list(raw["steps"], "steps"))]
    if not seen:
        c.fail("steps", "needs at least one checkpoint")
    if oracle == "stated":
        for s in steps:
            if "checkpoint" in s and not s["checkpoint"].expect:
                c.fail(f"steps[{s['index']}].expect", "required with oracle: stated")
    provisioner = raw.get("provisioner")
    if provisioner is not None:
        c.str(provisioner, "provisioner")
    kube_scheduler = None
    if raw.get("kube-scheduler") is not None:
        ks = c.dict(raw["kube-scheduler"], "kube-scheduler", allowed=("compare",), required=("compare",))
        kube_scheduler = {"compare": c.strings(ks["compare"], "kube-scheduler.compare")}
        if oracle != "volcano":
            c.fail("kube-scheduler", "goes with the Volcano oracle (the default)")
    return Scenario(
        name=name, path=path, description=raw["description"], issue=raw.get("issue"),
        provisioner=provisioner, kube_scheduler=kube_scheduler,
        oracle=oracle, rules=raw.get("rules"), nodes=_node_groups(c, raw["nodes"]),
        queues=_queues(c, raw.get("queues") or []), scheduler=scheduler, namespaces=namespaces,
        events=c.strings(raw.get("events") or [], "events"), steps=steps,
        invariants=_known_names(c, raw.get("invariants") or [], "invariants", "invariant",
                                observe.INVARIANTS),
        details=_known_names(c, raw.get("details") or [], "details", "detail", observe.DETAILS),
        digest=semantic_digest(raw), raw=copy.deepcopy(raw))


def load_all(directory, root, common=None):
    files = sorted(f for f in os.listdir(directory) if f.endswith(".yaml"))
    return [load(os.path.join(directory, f), root, common) for f in files]
