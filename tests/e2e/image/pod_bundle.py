#!/usr/bin/env python3
"""What a kubelet does before it starts a container, for one Deployment the chart rendered: an
OCI runtime bundle (config.json) that runs the Deployment's container from the image's unpacked
root filesystem with the Deployment's command, arguments, environment, user, capabilities and
read-only root, its volumes materialised (a projected ServiceAccount token and CA at the
standard path, ConfigMaps, emptyDirs) and the in-cluster API server address in
KUBERNETES_SERVICE_HOST/PORT. The pod shares the host's network, as the loopback control plane
needs. Prints the probes as JSON lines: {"probe": "readiness", "url": "http://..."}.

    pod_bundle.py --deployment FILE.json --image-config config.json --rootfs DIR --out DIR
                  --apiserver-host 127.0.0.1 --apiserver-port N --ca FILE --namespace NS
"""
import argparse
import json
import os
import subprocess
import sys

SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def kubectl(*args):
    return subprocess.run(["kubectl", *args], check=True, capture_output=True, text=True).stdout


def write_files(directory, files, mode=0o644):
    os.makedirs(directory, exist_ok=True)
    for name, content in files.items():
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, mode)


def fail(message):
    sys.exit(f"pod_bundle: {message}")


def env_value(entry, namespace, pod_name):
    if "value" in entry:
        return entry["value"]
    field = entry.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    values = {"metadata.namespace": namespace, "metadata.name": pod_name}
    if field not in values:
        fail(f"env {entry['name']}: unsupported source {entry.get('valueFrom')}")
    return values[field]


def volume_source(volume, args, out):
    """The host directory that backs a pod volume, filled as the kubelet would."""
    directory = os.path.join(out, "volumes", volume["name"])
    if "emptyDir" in volume:
        os.makedirs(directory, exist_ok=True)
        os.chmod(directory, 0o777)  # as the kubelet makes an emptyDir
    elif "configMap" in volume:
        data = json.loads(kubectl("-n", args.namespace, "get", "configmap",
                                  volume["configMap"]["name"], "-o", "json")).get("data", {})
        write_files(directory, data)
    elif "secret" in volume:
        fail(f"volume {volume['name']}: secret volumes are not needed by the default chart")
    else:
        fail(f"volume {volume['name']}: unsupported type {sorted(volume)}")
    return directory


def bind(source, destination, readonly):
    options = ["rbind", "nosuid", "nodev"] + (["ro"] if readonly else ["rw"])
    return {"destination": destination, "type": "bind", "source": source, "options": options}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("deployment", "image-config", "rootfs", "out", "apiserver-host", "apiserver-port",
                 "ca", "namespace"):
        parser.add_argument(f"--{flag}", required=True)
    args = parser.parse_args(argv[1:])
    deployment = json.load(open(args.deployment))
    config = json.load(open(args.image_config))
    name = deployment["metadata"]["name"]
    pod = deployment["spec"]["template"]["spec"]
    if len(pod["containers"]) != 1:
        fail(f"{name}: want one container, got {len(pod['containers'])}")
    container = pod["containers"][0]
    pod_security = pod.get("securityContext", {})
    security = container.get("securityContext", {})

    # The user: the pod's runAsUser/runAsGroup over the image's USER; runAsNonRoot refuses 0.
    image_user = config["process"]["user"]
    uid = security.get("runAsUser", pod_security.get("runAsUser", image_user["uid"]))
    gid = security.get("runAsGroup", pod_security.get("runAsGroup", image_user["gid"]))
    if security.get("runAsNonRoot", pod_security.get("runAsNonRoot")) and uid == 0:
        fail(f"{name}: runAsNonRoot, but the container would run as root")

    os.makedirs(args.out, exist_ok=True)
    mounts = list(config["mounts"])
    # The ServiceAccount token (TokenRequest, as a projected volume gets it), CA and namespace.
    if pod.get("automountServiceAccountToken", True):
        token = kubectl("-n", args.namespace, "create", "token", pod["serviceAccountName"],
                        "--duration=2h")
        sa_dir = os.path.join(args.out, "volumes", "serviceaccount")
        write_files(sa_dir, {"token": token.strip(), "ca.crt": open(args.ca).read(),
                             "namespace": args.namespace})
        mounts.append(bind(sa_dir, SA_PATH, readonly=True))
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        source = volume_source(volumes[mount["name"]], args, args.out)
        mounts.append(bind(source, mount["mountPath"], readonly=mount.get("readOnly", False)))

    drop = security.get("capabilities", {}).get("drop", [])
    add = ["CAP_" + c for c in security.get("capabilities", {}).get("add", [])]
    if "ALL" not in drop:
        fail(f"{name}: the chart no longer drops all capabilities ({drop})")

    env = list(config["process"]["env"]) + [
        f"KUBERNETES_SERVICE_HOST={args.apiserver_host}",
        f"KUBERNETES_SERVICE_PORT={args.apiserver_port}"]
    env += [f"{e['name']}={env_value(e, args.namespace, name)}" for e in container.get("env", [])]

    config["process"].update({
        "terminal": False,
        "args": container.get("command", []) + container.get("args", []),
        "env": env,
        "user": {"uid": uid, "gid": gid, "additionalGids": [gid]},
        "capabilities": {k: add for k in ("bounding", "effective", "permitted", "inheritable",
                                          "ambient")},
        "noNewPrivileges": not security.get("allowPrivilegeEscalation", True),
        # The runtime's own limits, as containerd leaves them (raising them needs
        # CAP_SYS_RESOURCE, which this machine's root does not have).
        "rlimits": [],
    })
    config["root"] = {"path": os.path.abspath(args.rootfs),
                      "readonly": bool(security.get("readOnlyRootFilesystem"))}
    config["hostname"] = name
    config["mounts"] = mounts
    config["linux"]["namespaces"] = [n for n in config["linux"]["namespaces"]
                                     if n["type"] != "network"]  # host networking
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)

    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    for kind in ("liveness", "readiness"):
        get = container.get(f"{kind}Probe", {}).get("httpGet")
        if not get:
            fail(f"{name}: no HTTP {kind} probe")
        port = ports.get(get["port"], get["port"])
        print(json.dumps({"probe": kind, "url": f"http://127.0.0.1:{port}{get['path']}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
