"""Writes the Jobs of issue 17 that are too large to keep in a seed corpus into OUTDIR: a chain
of 20,000 tasks each depending on the next (the recursive cycle check overflowed the stack at
this length under AddressSanitizer), the same chain closed into a cycle, and a Job with 40,000
labels and 40,000 annotations (quadratic label handling in /jobs/mutate). The sanitizers make
each take tens of seconds; the 42,000-task case runs in the unit tests instead."""
import json
import os
import sys


def job(tasks, labels=0, chain=False, cycle=False):
    spec_tasks = []
    for i in range(tasks):
        t = {"name": f"t{i}", "replicas": 1,
             "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
        if chain and (i + 1 < tasks or cycle):
            t["dependsOn"] = {"name": [f"t{(i + 1) % tasks}"]}
        spec_tasks.append(t)
    meta = {"name": "big", "namespace": "science",
            "labels": {f"example.com/l{i}": "v" for i in range(labels)},
            "annotations": {f"example.com/a{i}": "v" for i in range(labels)}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta,
            "spec": {"queue": "default", "tasks": spec_tasks}}


def main(outdir):
    cases = {
        "chain_20000.json": job(20000, chain=True),
        "cycle_20000.json": job(20000, chain=True, cycle=True),
        "labels_40000.json": job(1, labels=40000),
    }
    for name, obj in cases.items():
        with open(os.path.join(outdir, name), "w") as f:
            json.dump(obj, f, separators=(",", ":"))


if __name__ == "__main__":
    main(sys.argv[1])
