#!/usr/bin/env python3
"""Self-test of the differential runner's logic, without a cluster: scenario files are checked
with errors that name the field, comparisons find every difference beyond a tolerance, and
known/intentional/expect marks are applied as README.md says.

    selftest.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import compare, execute, observe, scenario  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def load_text(text, name="t"):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"{name}.yaml")
        with open(path, "w") as f:
            f.write(text)
        return scenario.load(path, ROOT)


def load_error(text):
    try:
        load_text(text)
    except scenario.ScenarioError as e:
        return str(e)
    return None


BASE = """description: d
nodes: [{count: 1}]
steps:
- apply: |
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
"""


def test_scenario_errors():
    cases = [
        ("description: d\nsteps: [{checkpoint: c}]\n", "nodes: required"),
        (BASE, "steps: needs at least one checkpoint"),
        (BASE + "- checkpoint: c\n- checkpoint: c\n", "checkpoint 'c' appears twice"),
        (BASE + "- checkpoint: c\n  tolerance: {x: -1}\n", "steps[1].tolerance.x: must be a number >= 0"),
        (BASE + "- delete: {kind: Pod}\n- checkpoint: c\n", "steps[1].delete: needs exactly one of name and selector"),
        (BASE + "- sleep: 1\n  wait: {until: {}}\n- checkpoint: c\n", "steps[1]: must have exactly one of"),
        (BASE + "- checkpoint: c\n  known: [{keys: [a]}]\n", "steps[1].known[0].issue: required"),
        (BASE + "- checkpoint: c\nbogus: 1\n", "bogus: unknown field"),
        (BASE.replace("nodes: [{count: 1}]", "nodes: [{count: 0}]") + "- checkpoint: c\n", "nodes[0].count: must be a number >= 1"),
        (BASE + "- checkpoint: c\ninvariants: [nope]\n", "invariants[0]: unknown invariant 'nope'"),
        (BASE + "- checkpoint: c\noracle: stated\n", "rules: required with oracle: stated"),
        (BASE + "- checkpoint: c\nqueues: [{name: default}]\n", "queues[0].name: 'default' exists on both sides"),
        (BASE + "- apply_file: no/such/file.yaml\n- checkpoint: c\n", "steps[1].apply_file: no file no/such/file.yaml"),
    ]
    for text, want in cases:
        got = load_error(text)
        expect(got is not None and want in got, f"scenario error: want '{want}', got {got!r}")


def test_digest_ignores_marks():
    a = load_text(BASE + "- checkpoint: c\n  expect: {x: 1}\n")
    b = load_text(BASE.replace("description: d", "description: other") +
                  "- checkpoint: c\n  expect: {x: 2}\n  known: [{issue: '1', keys: [x]}]\n")
    c = load_text(BASE + "- sleep: 1\n- checkpoint: c\n")
    expect(a.digest == b.digest, "descriptions and marks must not change the digest")
    expect(a.digest != c.digest, "a changed timeline must change the digest")


def findings(text, volcano, tephra, oracle=None):
    sc = load_text(BASE + text)
    got = compare.compare_scenario(sc, None if oracle == "stated" else {"c": volcano}, {"c": tephra})
    return sorted((f.kind, f.key) for f in got)


def test_compare():
    expect(findings("- checkpoint: c\n", {"a": 1, "b": "x"}, {"a": 1, "b": "x"}) == [],
           "equal facts must give no finding")
    expect(findings("- checkpoint: c\n", {"a": 8}, {"a": 0}) == [("difference", "a")],
           "a differing fact is a difference")
    expect(findings("- checkpoint: c\n", {"a": 8}, {}) == [("difference", "a")],
           "a fact missing on one side is a difference")
    expect(findings("- checkpoint: c\n  tolerance: {a: 1}\n", {"a": 6}, {"a": 5}) == [],
           "a difference within the tolerance is no finding")
    expect(findings("- checkpoint: c\n  tolerance: {a: 1}\n", {"a": 6}, {"a": 4}) == [("difference", "a")],
           "a difference beyond the tolerance is a finding")
    expect(findings("- checkpoint: c\n  ignore: [a*]\n", {"ab": 6}, {"ab": 4}) == [],
           "ignored facts are not compared")
    expect(findings("- checkpoint: c\n", {"pods/n/g.nodes": 1}, {"pods/n/g.nodes": 2}) == [],
           "pods/*.nodes is not compared by default")
    expect(findings("- checkpoint: c\n  compare: ['pods/*.nodes']\n", {"pods/n/g.nodes": 1},
                    {"pods/n/g.nodes": 2}) == [("difference", "pods/n/g.nodes")],
           "compare: brings an ignored fact back")
    known = "- checkpoint: c\n  known: [{issue: '18.1', keys: [a]}]\n"
    expect(findings(known, {"a": 8, "b": 1}, {"a": 0, "b": 2}) == [("difference", "b"), ("known", "a")],
           "a known mark covers only its keys")
    expect(findings(known, {"a": 8}, {"a": 8}) == [("known-gone", "a")],
           "a known mark without a difference is reported gone")
    intentional = ("- checkpoint: c\n  intentional: [{reason: r, keys: ['x*'], "
                   "tephra: {x.phase: Running}}]\n")
    expect(findings(intentional, {"x.phase": "Pending", "x.n": 0}, {"x.phase": "Running", "x.n": 4}) ==
           [("intentional", "x.phase")], "intentional keys are checked against the documented outcome")
    expect(findings(intentional, {"x.phase": "Pending"}, {"x.phase": "Pending"}) ==
           [("intentional-mismatch", "x.phase")], "Tephra missing its documented outcome fails")
    expected = "- checkpoint: c\n  expect: {a: 8}\n"
    expect(findings(expected, {"a": 7}, {"a": 7}) == [("expect-tephra", "a"), ("expect-volcano", "a")],
           "expect is checked on both sides")
    expect(findings(expected, {"a": 8}, {"a": "(absent)"}) == [("difference", "a"), ("expect-tephra", "a")],
           "expect on Tephra")
    stated = "- checkpoint: c\noracle: stated\nrules: r\n".replace("- checkpoint: c\n", "- checkpoint: c\n  expect: {a: 4}\n")
    expect(findings(stated, None, {"a": 4, "b": 9}, oracle="stated") == [],
           "with a stated oracle only expect is checked")
    expect(findings(stated, None, {"a": 1}, oracle="stated") == [("expect-tephra", "a")],
           "with a stated oracle a missed expectation fails")


def test_when_and_common_marks():
    common = scenario.Common(known=[scenario.Mark("known", "c", ["a"], {}, common=True)])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.yaml")
        with open(path, "w") as f:
            f.write(BASE + "- checkpoint: c\n  known: [{issue: s, keys: [a], when: {tephra: '(absent)'}}]\n")
        sc = scenario.load(path, ROOT, common)
    hits = {}
    got = compare.compare_scenario(sc, {"c": {"a": 1}}, {"c": {}}, hits)
    expect([(f.kind, f.label) for f in got] == [("known", "issue-s")],
           "the scenario's mark decides before the common one")
    got = compare.compare_scenario(sc, {"c": {"a": 1}}, {"c": {"a": 2}}, hits)
    expect([(f.kind, f.label) for f in got] == [("known", "issue-c"), ("known-gone", "issue-s: no difference left under this mark; remove it")],
           "when: limits a mark to the values it names")
    expect(list(hits.values()) == [1], "common marks count their hits for the whole run")


def test_stale_recording():
    sc = load_text(BASE + "- checkpoint: c\n  tolerance: {a: 1}\n")
    cp = sc.checkpoints()[0]
    expect(compare.compare_recording(cp, {"a": 5}, {"a": 6}) == [], "within tolerance is not stale")
    expect([f.key for f in compare.compare_recording(cp, {"a": 5}, {"a": 7})] == ["a"],
           "beyond tolerance is stale")


def test_pod_groups():
    job_pod = {"metadata": {"name": "j-w-0", "labels": {"volcano.sh/job-name": "j", "volcano.sh/task-spec": "w"}}}
    expect(observe.pod_groups(job_pod, {}) == ["job:j", "job:j/w"], "a Job's pod counts for the job and its task")
    rs_pod = {"metadata": {"name": "web-1-x", "ownerReferences": [
        {"kind": "ReplicaSet", "name": "web-1", "controller": True}]}}
    expect(observe.pod_groups(rs_pod, {"web-1": "deployment:web"}) == ["replicaset:web-1", "deployment:web"],
           "a Deployment's pod counts for its ReplicaSet and Deployment")
    expect(observe.pod_groups({"metadata": {"name": "p"}}, {}) == ["pod:p"], "a plain pod is its own group")


def test_invariant_needs_two_observations():
    from types import SimpleNamespace as NS
    key = "invariant/podgroup-not-pending-while-pod-runs"
    seen = iter(["held", "broken: a", "held", "broken: a", "broken: b", "broken: b", "held"])
    real = observe.observe
    observe.observe = lambda *args: ({key: next(seen)}, 0)
    try:
        side = NS(cluster=None, kind="tephra")
        t = execute.Timeline(side, NS(events=(), invariants=("podgroup-not-pending-while-pod-runs",),
                                      details=()), None)
        t.names = NS(namespaces={}, suffix="")
        got = [t.observe()[key] for _ in range(7)]
    finally:
        observe.observe = real
    expect(got == ["held", "held", "held", "held", "held", "broken: b", "broken: b"],
           f"a violation counts once two observations in a row show it, then stays (got {got})")


def test_storage_facts():
    """Claims and pods with claims as facts in the scenario's names, volume reasons as
    kube-scheduler words them whatever surrounds them."""
    state = {}
    local = lambda n: n[:-3] if n.endswith("-42") else n  # noqa: E731
    claims = [{"metadata": {"name": "a", "annotations": {"volume.kubernetes.io/selected-node": "node-1-42"}},
               "spec": {"volumeName": "pvc-123"}, "status": {"phase": "Bound"}},
              {"metadata": {"name": "b"}, "spec": {"volumeName": "pv-x-42"}, "status": {"phase": "Bound"}},
              {"metadata": {"name": "c"}, "spec": {}, "status": {"phase": "Pending"}}]
    volumes = [{"metadata": {"name": "pvc-123", "annotations": {"pv.kubernetes.io/provisioned-by": "p"}}},
               {"metadata": {"name": "pv-x-42"}, "spec": {"claimRef": {"namespace": "compat-7", "name": "b"}},
                "status": {"phase": "Bound"}}]
    mounts = [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]
    pods = [{"metadata": {"name": "runs"}, "spec": {"nodeName": "node-1-42", "volumes": mounts},
             "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}},
            {"metadata": {"name": "waits"}, "spec": {"volumes": mounts},
             "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                        "message": "0/3 nodes are available: 1 node(s) didn't match "
                                                   "PersistentVolume's node affinity, 2 node(s) didn't find "
                                                   "available persistent volumes to bind. preemption: ..."}]}},
            {"metadata": {"name": "plain"}, "spec": {}}]
    observe._observe_storage(state, "compat", pods, claims, volumes, local)
    observe._observe_volumes(state, volumes, local, lambda ns: "compat" if ns == "compat-7" else ns)
    want = {"pvc/compat/a.volume": "(provisioned)", "pvc/compat/a.node": "node-1",
            "pvc/compat/b.volume": "pv-x", "pvc/compat/c.phase": "Pending", "pvcs/compat.Bound": 2,
            "pod/compat/runs.node": "node-1", "pod/compat/waits.scheduled": "False/Unschedulable",
            "pod/compat/waits.why": "didn't find available persistent volumes to bind; "
                                    "didn't match PersistentVolume's node affinity",
            "storage/compat.nodes": "node-1", "pv/pv-x.claim": "compat/b", "pv/pv-x.phase": "Bound"}
    for key, value in want.items():
        expect(state.get(key) == value, f"{key} is {value!r} (got {state.get(key)!r})")
    expect("pod/compat/plain.node" not in state, "a pod without claims is not a storage fact")


def test_kube_scheduler_oracle():
    """Only the facts a scenario names under kube-scheduler.compare are compared with it."""
    sc = load_text("""
description: d
nodes: [{count: 1}]
kube-scheduler: {compare: ["pvc/*"]}
steps: [{checkpoint: c}]
""")
    kube = {"c": {"pvc/ns/a.phase": "Bound", "pods/ns/all.running": 1}}
    tephra = {"c": {"pvc/ns/a.phase": "Pending", "pods/ns/all.running": 0}}
    got = compare.compare_oracle(sc, kube, tephra, "kube-scheduler")
    expect([f.key for f in got] == ["kube-scheduler:pvc/ns/a.phase"],
           f"only pvc/* is compared with kube-scheduler (got {[f.key for f in got]})")
    expect(got[0].kind == compare.DIFFERENCE, "a difference with kube-scheduler fails the run")


def main():
    for test in (test_scenario_errors, test_digest_ignores_marks, test_compare, test_when_and_common_marks,
                 test_stale_recording, test_pod_groups, test_invariant_needs_two_observations,
                 test_storage_facts, test_kube_scheduler_oracle):
        test()
    for f in failures:
        print(f"FAIL: {f}")
    print(f"selftest: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
