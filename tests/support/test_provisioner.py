#!/usr/bin/env python3
"""A small volume provisioner for tests: what a CSI driver's external-provisioner does for a
scheduler, on a cluster of simulated nodes that has no storage.

It watches (polls) PersistentVolumeClaims of the StorageClasses whose provisioner is --name.
A claim a scheduler annotated with volume.kubernetes.io/selected-node gets a PV made for it on
that node: its size, access modes and volume mode, node affinity kubernetes.io/hostname = the
node, a claimRef to the claim and a CSI source of driver --name, as an external-provisioner
writes it; kube-controller-manager's PV controller then binds the two. On a node given with
--refuse-node it does what a provisioner that cannot provision there does: it removes the
annotation, which tells the scheduler to choose again. PVs it made whose claim is gone
(Released) are deleted. It stops on SIGTERM or SIGINT.

    test_provisioner.py --kubeconfig FILE --name example.com/csi [--kubectl PATH]
                        [--refuse-node NODE]... [--interval SECONDS]
"""
import argparse
import json
import signal
import subprocess
import sys
import time

SELECTED_NODE = "volume.kubernetes.io/selected-node"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


class Kubectl:
    def __init__(self, path, kubeconfig):
        self.base = [path, f"--kubeconfig={kubeconfig}"]

    def run(self, *args, stdin=None):
        r = subprocess.run(self.base + list(args), input=stdin, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"test-provisioner: kubectl {' '.join(args)}: {r.stderr.strip()}",
                  file=sys.stderr, flush=True)
            return None
        return r.stdout

    def items(self, *args):
        out = self.run("get", *args, "-o", "json")
        return json.loads(out)["items"] if out else []


def volume_for(claim, klass, node, name):
    meta, spec = claim["metadata"], claim.get("spec") or {}
    request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"pvc-{meta['uid']}", "annotations": {PROVISIONED_BY: name}},
        "spec": {
            "capacity": {"storage": request},
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": klass,
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}},
            "csi": {"driver": name, "volumeHandle": meta["uid"]},
        },
    }


def provision_once(kubectl, name, refuse):
    classes = {c["metadata"]["name"] for c in kubectl.items("storageclasses")
               if c.get("provisioner") == name}
    volumes = kubectl.items("persistentvolumes")
    existing = {v["metadata"]["name"] for v in volumes}
    for claim in kubectl.items("persistentvolumeclaims", "--all-namespaces"):
        meta, spec = claim["metadata"], claim.get("spec") or {}
        klass = (meta.get("annotations") or {}).get(BETA_CLASS, spec.get("storageClassName"))
        node = (meta.get("annotations") or {}).get(SELECTED_NODE)
        if klass not in classes or not node or spec.get("volumeName") or meta.get("deletionTimestamp"):
            continue
        if node in refuse:
            kubectl.run("annotate", "-n", meta["namespace"], "pvc", meta["name"], f"{SELECTED_NODE}-")
            print(f"test-provisioner: cannot provision {meta['namespace']}/{meta['name']} on {node}",
                  flush=True)
            continue
        pv = volume_for(claim, klass, node, name)
        if pv["metadata"]["name"] in existing:
            continue
        if kubectl.run("create", "-f", "-", stdin=json.dumps(pv)) is not None:
            print(f"test-provisioner: provisioned {pv['metadata']['name']} for "
                  f"{meta['namespace']}/{meta['name']} on {node}", flush=True)
    for v in volumes:
        ours = (v["metadata"].get("annotations") or {}).get(PROVISIONED_BY) == name
        if ours and (v.get("status") or {}).get("phase") == "Released":
            kubectl.run("delete", "persistentvolume", v["metadata"]["name"], "--wait=false")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--name", required=True, help="the provisioner (and CSI driver) name")
    p.add_argument("--kubectl", default="kubectl")
    p.add_argument("--refuse-node", action="append", default=[])
    p.add_argument("--interval", type=float, default=0.3)
    p.add_argument("--marker", help="ignored: lets whoever started it know its command line")
    args = p.parse_args(argv)
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))
    kubectl = Kubectl(args.kubectl, args.kubeconfig)
    print(f"test-provisioner: provisioning for {args.name}", flush=True)
    while not stop:
        provision_once(kubectl, args.name, set(args.refuse_node))
        time.sleep(args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
