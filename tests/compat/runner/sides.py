"""The sides of a comparison, each on a control plane of its own (hack/control-plane.sh):

* TephraSide: the chart installed in local mode and the three daemons as local processes
  (hack/local-daemons.sh), exactly as hack/local-up.sh runs them.
* VolcanoSide: real Volcano from the baseline directory (compat.py --baseline; its README): its CRDs, the
  chart's webhook configurations rendered to call a local vc-webhook-manager on 127.0.0.1 with a
  CA generated here, vc-controller-manager and vc-scheduler as local processes.
* KubeSchedulerSide: kube-scheduler (the control plane's tools' v1.37.2) with one profile whose
  schedulerName is volcano, so the same manifests run unchanged; the oracle for placement
  validity (volumes). Tephra's CRDs are installed so Queue and PodGroup manifests apply, but
  nothing acts on them.

A scenario with a `provisioner` gets tests/support/test_provisioner.py for that name on every
side while it runs.

Both schedulers get the same schedule period (1 s), client QPS/burst (2000/2000), controller
QPS/burst (50/100) and leader election off. Between scenarios `reset` deletes what the previous
scenario left, creates the scenario's nodes and queues and restarts the controllers and the
scheduler with the scenario's scheduler configuration."""
import base64
import fcntl
import gzip
import http.client
import importlib.util
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request

import yaml

from . import execute, kube

SYSTEM_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease", "tephra-system",
                     "volcano-system"}
KEPT_QUEUES = {"root", "default"}
DEFAULT_QUEUE_SPEC = {"weight": 1, "reclaimable": True, "capability": None, "deserved": None,
                      "guarantee": None, "priority": None}


class SideError(Exception):
    pass


def _load_free_ports():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "hack", "free_ports.py")
    spec = importlib.util.spec_from_file_location("free_ports", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.free_ports


# hack/free_ports.py's: free ports below the ephemeral range.
free_ports = _load_free_ports()


def eventually(seconds, what, check, interval=0.25):
    deadline = time.time() + seconds
    while True:
        try:
            if check():
                return
        except OSError:
            pass
        if time.time() >= deadline:
            raise SideError(f"{what}: not within {seconds}s")
        time.sleep(interval)


def _ours(pid, marker):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return marker in f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False


class Side:
    """What both sides share: the control plane, the cluster client, the reset between
    scenarios. Subclasses install and restart their own daemons."""

    kind = None

    def __init__(self, root, cp_name, log):
        self.root, self.cp_name, self.log = root, cp_name, log
        self.cluster = None
        self.lock_file = None
        self.serial = int(time.time()) % 100000  # names of a scenario's run (execute.Names)
        self.created_cluster_objects = []  # (apiVersion, kind, name) created by the scenario

    # ---- control plane ---------------------------------------------------------------------

    def _cp(self, *args, check=True):
        r = subprocess.run([os.path.join(self.root, "hack", "control-plane.sh"), *args,
                            "--name", self.cp_name], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SideError(f"hack/control-plane.sh {args[0]} --name {self.cp_name} failed:\n{r.stderr[-3000:]}")
        return r

    def running(self):
        r = self._cp("env", check=False)
        if r.returncode != 0:
            return False
        env = kube.parse_env(r.stdout)
        try:
            return kube.Cluster(env).healthy()
        except (OSError, ValueError):
            return False

    def up(self, reuse=False):
        """A fresh control plane (or, with reuse, the running one) with this side installed."""
        if reuse and self.running():
            self._connect()
            self.log(f"reusing control plane {self.cp_name}")
            if not self.installed():
                self.install()
            return
        self.down()
        t0 = time.time()
        self._cp("up", "--nodes", "0")
        self._connect()
        self.install()
        self.log(f"control plane {self.cp_name} up with {self.kind} in {time.time() - t0:.1f}s")

    def _connect(self):
        self.env = kube.parse_env(self._cp("env").stdout)
        self.cluster = kube.Cluster(self.env)
        self.dir = self.env["TEPHRA_CP_DIR"]
        self.tools = self.env["TEPHRA_TOOLS_BIN"]
        self._lock()

    def _lock(self):
        """One runner per control plane: a second one would delete the first one's objects."""
        if getattr(self, "lock_file", None) is not None:
            return
        self.lock_file = open(os.path.join(self.dir, "compat.lock"), "w")
        try:
            fcntl.flock(self.lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.lock_file.close()
            self.lock_file = None
            raise SideError(f"control plane {self.cp_name} is in use by another compat.py run "
                            "(use another --prefix)")

    def down(self):
        if self._cp("env", check=False).returncode == 0:
            self._connect()  # refuses while another run uses it
            try:
                self.stop_daemons()
            except (SideError, OSError, KeyError):
                pass
        self._cp("down", check=False)
        if getattr(self, "lock_file", None) is not None:
            self.lock_file.close()
            self.lock_file = None

    def kubectl(self, *args, stdin=None, check=True):
        r = subprocess.run([os.path.join(self.tools, "kubectl"),
                            f"--kubeconfig={self.env['TEPHRA_KUBECONFIG_ADMIN']}", *args],
                           input=stdin, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SideError(f"kubectl {' '.join(args)} failed: {r.stderr.strip()[-2000:]}")
        return r.stdout

    # ---- between scenarios -----------------------------------------------------------------

    def next_names(self, scenario):
        self.serial += 1
        return execute.Names(scenario, self.serial)

    def reset(self, scenario, names, node_objects, queue_objects):
        """The cluster as the scenario starts: nothing from earlier scenarios, the scenario's
        nodes (Ready) and queues (Open), its namespaces, and freshly started controllers and
        scheduler with its configuration."""
        self.cluster.refresh_discovery()
        # Controllers and scheduler stop first so that nothing recreates what is being deleted;
        # the webhook stays (queue deletions pass through it).
        self.stop_daemons(keep_admission=True)
        self.ensure_admission()
        # The new nodes (names of their own) get Ready while the old objects go.
        self._create_all(node_objects)
        node_names = [n["metadata"]["name"] for n in node_objects]
        self._delete_leftovers(keep_nodes=set(node_names))
        self.cluster.refresh_discovery()
        eventually(60, f"{len(node_names)} nodes Ready", lambda: self._nodes_ready(node_names))
        default_patch = self.cluster.patch("scheduling.volcano.sh/v1beta1", "Queue", None, "default",
                                           {"spec": DEFAULT_QUEUE_SPEC})
        if not default_patch and default_patch.status != 404:
            raise SideError(f"resetting queue default: {default_patch}")
        # A fresh cluster has nothing allocated; the scheduler, stopped while the pods went,
        # would otherwise start from the previous scenario's numbers.
        for q in KEPT_QUEUES:
            self.cluster.patch("scheduling.volcano.sh/v1beta1", "Queue", None, q,
                               {"status": {"allocated": None}}, subresource="status")
        self._create_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                          for ns in names.namespaces.values()])
        self.start_daemons(scenario.scheduler or self.default_scheduler_conf())
        self._create_all(queue_objects)
        qnames = [q["metadata"]["name"] for q in queue_objects]
        eventually(60, f"queues {', '.join(qnames) or 'default'} Open", lambda: self._queues_open(qnames))

    def _create_all(self, objects, existing_ok=False):
        for obj in objects:
            got = self.cluster.create(obj)
            if not got and not (existing_ok and got.status == 409):
                raise SideError(f"creating {obj['kind']} {obj['metadata']['name']}: {got}")

    def _nodes_ready(self, names):
        """Ready, and without the taints kube-controller-manager puts on a node until it has
        seen it Ready (both schedulers would wait for them to go)."""
        nodes = {n["metadata"]["name"]: n for n in self.cluster.list("v1", "Node")}
        for name in names:
            node = nodes.get(name) or {}
            conds = node.get("status", {}).get("conditions") or []
            if not any(c["type"] == "Ready" and c["status"] == "True" for c in conds):
                return False
            if any(t.get("key") in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
                   for t in (node.get("spec") or {}).get("taints") or []):
                return False
        return True

    def _queues_open(self, names):
        queues = {q["metadata"]["name"]: q for q in self.cluster.list("scheduling.volcano.sh/v1beta1", "Queue")}
        return all((queues.get(n) or {}).get("status", {}).get("state") == "Open"
                   for n in list(names) + ["default"])

    def _delete_leftovers(self, keep_nodes):
        """Deletes the earlier scenarios' objects: in their namespaces workloads, then pods (and
        waits for them), queues, nodes other than `keep_nodes`, PriorityClasses; the namespaces
        themselves are left to the namespace controller, which takes a few seconds each."""
        c = self.cluster
        namespaces = [n["metadata"]["name"] for n in c.list("v1", "Namespace")
                      if n["metadata"]["name"] not in SYSTEM_NAMESPACES]
        kinds = sorted((k for k in c.namespaced_kinds("deletecollection")
                        if k[0] != "authorization.k8s.io/v1"), key=lambda k: k == ("v1", "Pod"))
        for ns in namespaces:
            for api_version, kind in kinds:
                c.delete_collection(api_version, kind, ns)
        for api_version, kind, name in reversed(self.created_cluster_objects):
            if kind not in ("Queue", "Node", "Namespace"):
                c.delete(api_version, kind, None, name)
        self.created_cluster_objects = []

        def gone():
            for ns in namespaces:
                for kind in (("v1", "Pod"), ("batch.volcano.sh/v1alpha1", "Job"),
                             ("scheduling.volcano.sh/v1beta1", "PodGroup")):
                    left = c.list(*kind, namespace=ns)
                    if left:
                        for o in left:  # finalizers a scenario set to hold a pod terminating
                            if o["metadata"].get("deletionTimestamp") and o["metadata"].get("finalizers"):
                                c.patch(*kind, ns, o["metadata"]["name"], {"metadata": {"finalizers": None}})
                        c.delete_collection(*kind, ns)
                        return False
            return True
        eventually(120, "the previous scenario's pods, Jobs and PodGroups deleted", gone)
        for ns in namespaces:
            c.delete("v1", "Namespace", None, ns)
        self._delete_queues()
        for node in c.list("v1", "Node"):
            if node["metadata"]["name"] not in keep_nodes:
                c.delete("v1", "Node", None, node["metadata"]["name"], grace=0)
        for pc in c.list("scheduling.k8s.io/v1", "PriorityClass"):
            if not pc["metadata"]["name"].startswith("system-"):
                c.delete("scheduling.k8s.io/v1", "PriorityClass", None, pc["metadata"]["name"])
        # PVs a scenario's provisioner made (those the scenario made are deleted above).
        for pv in c.list("v1", "PersistentVolume") or []:
            if "pv.kubernetes.io/provisioned-by" in (pv["metadata"].get("annotations") or {}):
                c.patch("v1", "PersistentVolume", None, pv["metadata"]["name"], {"metadata": {"finalizers": None}})
                c.delete("v1", "PersistentVolume", None, pv["metadata"]["name"])
        eventually(60, "old nodes deleted",
                   lambda: all(n["metadata"]["name"] in keep_nodes for n in c.list("v1", "Node")))

    def _delete_queues(self):
        c = self.cluster
        for _ in range(10):
            queues = [q for q in c.list("scheduling.volcano.sh/v1beta1", "Queue")
                      if q["metadata"]["name"] not in KEPT_QUEUES]
            if not queues:
                return
            parents = {(q.get("spec") or {}).get("parent") for q in queues}
            for q in queues:  # leaves first: a queue with children cannot be deleted
                if q["metadata"]["name"] not in parents:
                    c.delete("scheduling.volcano.sh/v1beta1", "Queue", None, q["metadata"]["name"])
            time.sleep(0.3)
        raise SideError("queues left after 10 rounds of deletion: " +
                        ", ".join(q["metadata"]["name"] for q in c.list("scheduling.volcano.sh/v1beta1", "Queue")))

    # ---- processes the runner starts on this side -----------------------------------------

    def _work(self, *parts):
        return os.path.join(self.dir, self.kind, *parts)

    def _pids_file(self):
        return self._work("pids")

    def _start(self, name, argv, health_port):
        """Starts `argv` as process `name` (logs/NAME.log) and waits for /healthz on
        `health_port` (HTTP or HTTPS, unverified) unless it is None."""
        os.makedirs(self._work(), exist_ok=True)
        log = open(os.path.join(self.dir, "logs", f"{name}.log"), "ab")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        with open(self._pids_file(), "a") as f:
            f.write(f"{name} {proc.pid}\n")
        if health_port is None:
            return
        url = f"127.0.0.1:{health_port}/healthz"
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE

        def healthy():
            if proc.poll() is not None:
                raise SideError(f"{name} exited with {proc.returncode}; see {self.dir}/logs/{name}.log")
            for scheme in ("http", "https"):
                try:
                    if urllib.request.urlopen(f"{scheme}://{url}", timeout=2, context=insecure).status == 200:
                        return True
                except (OSError, http.client.HTTPException):
                    pass
            return False
        eventually(60, f"{name} healthy at {url}", healthy)

    def _running(self):
        if not os.path.exists(self._pids_file()):
            return {}
        out = {}
        for line in open(self._pids_file()):
            name, pid = line.split()
            if _ours(int(pid), self.dir):
                out[name] = int(pid)
        return out

    def _stop(self, names=None):
        """Stops the processes named (all when None), waiting for each to go."""
        kept = []
        for name, pid in self._running().items():
            if names is not None and name not in names:
                kept.append(f"{name} {pid}\n")
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(100):
                if not _ours(pid, self.dir):
                    break
                time.sleep(0.05)
            else:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if os.path.exists(self._pids_file()):
            with open(self._pids_file(), "w") as f:
                f.writelines(kept)

    def start_provisioner(self, name):
        """tests/support/test_provisioner.py for `name`, until stop_provisioner."""
        self._start("test-provisioner", [
            "python3", os.path.join(self.root, "tests", "support", "test_provisioner.py"),
            f"--kubeconfig={self.env['TEPHRA_KUBECONFIG_ADMIN']}", f"--name={name}",
            f"--kubectl={os.path.join(self.tools, 'kubectl')}", f"--marker={self.dir}"], None)

    def stop_provisioner(self):
        self._stop({"test-provisioner"})

    def record_created(self, obj):
        found = self.cluster.resource(obj["apiVersion"], obj["kind"])
        if found is not None and not found[1]:
            self.created_cluster_objects.append((obj["apiVersion"], obj["kind"], obj["metadata"]["name"]))

    # ---- interface for subclasses ----------------------------------------------------------

    def installed(self):
        raise NotImplementedError

    def install(self):
        raise NotImplementedError

    def default_scheduler_conf(self):
        raise NotImplementedError

    def start_daemons(self, scheduler_conf):
        raise NotImplementedError

    def ensure_admission(self):
        """The admission webhook serves (its hooks fail closed)."""
        raise NotImplementedError

    def stop_daemons(self, keep_admission=False):
        raise NotImplementedError


class TephraSide(Side):
    kind = "tephra"
    release = "tephra"
    namespace = "tephra-system"

    def __init__(self, root, cp_name, log, bin_dir):
        super().__init__(root, cp_name, log)
        self.bin_dir = bin_dir

    def _helm(self, *args):
        r = subprocess.run([os.path.join(self.tools, "helm"), *args], capture_output=True, text=True,
                           env={**os.environ, "KUBECONFIG": self.env["TEPHRA_KUBECONFIG_ADMIN"]})
        if r.returncode != 0:
            raise SideError(f"helm {args[0]} failed: {r.stderr[-3000:]}")
        return r.stdout

    def installed(self):
        return bool(self.cluster.get("v1", "ConfigMap", self.namespace, f"{self.release}-local"))

    def up(self, reuse=False):
        for d in ("tephra-scheduler", "tephra-controller-manager", "tephra-admission"):
            if not os.access(os.path.join(self.bin_dir, d), os.X_OK):
                raise SideError(f"{self.bin_dir}/{d} is missing (build with: cmake --build --preset dev)")
        super().up(reuse)

    def install(self):
        p_webhook, p_admission, p_cm, p_sched = free_ports(4)
        self._helm("upgrade", "--install", self.release, os.path.join(self.root, "charts", "tephra"),
                   "--namespace", self.namespace, "--create-namespace",
                   "-f", os.path.join(self.root, "charts", "tephra", "values-local.yaml"),
                   "--set", f"admission.port={p_webhook}", "--set", f"admission.healthzPort={p_admission}",
                   "--set", f"controllerManager.healthzPort={p_cm}", "--set", f"scheduler.metricsPort={p_sched}",
                   # Volcano runs without leader election too; a restarted daemon starts at once.
                   "--set", "leaderElection.enabled=false")
        self.ensure_admission()

    def _local_daemons(self, *args, check=True):
        r = subprocess.run([os.path.join(self.root, "hack", "local-daemons.sh"), *args,
                            "--name", self.cp_name, "--release", self.release],
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SideError(f"hack/local-daemons.sh {args[0]} failed:\n{r.stderr[-3000:]}")
        return r

    def ensure_admission(self):
        status = self._local_daemons("status", check=False)
        if status.returncode != 0 or "tephra-admission running" not in status.stdout:
            self._local_daemons("start", "--bin", self.bin_dir, "--only", "admission")

    def default_scheduler_conf(self):
        values = yaml.safe_load(open(os.path.join(self.root, "charts", "tephra", "values.yaml")))
        return values["scheduler"]["conf"]

    def start_daemons(self, scheduler_conf):
        local = self.cluster.get("v1", "ConfigMap", self.namespace, f"{self.release}-local")
        if not local:
            raise SideError(f"no ConfigMap {self.namespace}/{self.release}-local: {local}")
        cm = local["data"]["scheduler.configMap"]
        got = self.cluster.patch("v1", "ConfigMap", self.namespace, cm,
                                 {"data": {"volcano-scheduler.conf": scheduler_conf}})
        if not got:
            raise SideError(f"writing the scheduler configuration into {cm}: {got}")
        self._local_daemons("start", "--bin", self.bin_dir, "--only", "controller-manager,scheduler")

    def stop_daemons(self, keep_admission=False):
        if keep_admission:
            self._local_daemons("stop", "--only", "controller-manager,scheduler")
        else:
            self._local_daemons("stop")

    def logs(self):
        return [os.path.join(self.dir, "logs", f"tephra-{d}.log")
                for d in ("scheduler", "controller-manager", "admission")]


class VolcanoSide(Side):
    kind = "volcano"
    namespace = "volcano-system"
    admissions = ("/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,"
                  "/hypernodes/validate,/cronjobs/validate")  # the chart's default
    daemons = ("vc-webhook-manager", "vc-controller-manager", "vc-scheduler")

    def __init__(self, root, cp_name, log, baseline, cache_dir):
        super().__init__(root, cp_name, log)
        self.baseline = baseline
        self.commit = self._baseline_commit()
        self.bin = os.path.join(cache_dir, self.commit[:12])
        self._unpack()

    def _baseline_commit(self):
        readme = open(os.path.join(self.baseline, "README.md")).read()
        m = re.search(r"built from commit `([0-9a-f]{40})`", readme)
        if not m:
            raise SideError(f"{self.baseline}/README.md names no commit")
        return m.group(1)

    def _unpack(self):
        os.makedirs(self.bin, exist_ok=True)
        for d in self.daemons:
            dest = os.path.join(self.bin, d)
            if os.access(dest, os.X_OK):
                continue
            tmp = dest + ".partial"
            with gzip.open(os.path.join(self.baseline, "bin", d + ".gz")) as src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out)
            os.chmod(tmp, 0o755)
            os.rename(tmp, dest)

    _path = Side._work

    def installed(self):
        return os.path.exists(self._path("ports"))

    def install(self):
        os.makedirs(self._path("pki"), exist_ok=True)
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", os.path.join(self.baseline, "crds"))
        for crd in ("jobs.batch.volcano.sh", "queues.scheduling.volcano.sh", "podgroups.scheduling.volcano.sh"):
            # A CRD replaced a moment ago may have no conditions yet, which `kubectl wait`
            # reports as an error rather than waiting for: ask again.
            for attempt in range(10):
                try:
                    self.kubectl("wait", "--for=condition=Established", f"crd/{crd}", "--timeout=60s")
                    break
                except SideError:
                    if attempt == 9:
                        raise
                    time.sleep(1)
        self.cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        ports = free_ports(6)
        with open(self._path("ports"), "w") as f:
            f.write(" ".join(map(str, ports)))
        self._make_pki()
        self._install_webhooks(ports[0])

    def _ports(self):
        return [int(p) for p in open(self._path("ports")).read().split()]

    def _make_pki(self):
        p = self._path("pki")

        def ssl(*args):
            subprocess.run(["openssl", *args], check=True, capture_output=True)
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=compat-volcano-webhook-ca",
            "-keyout", f"{p}/ca.key", "-out", f"{p}/ca.crt")
        ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", f"{p}/tls.key",
            "-out", f"{p}/tls.csr")
        with open(f"{p}/tls.ext", "w") as f:
            f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
        ssl("x509", "-req", "-in", f"{p}/tls.csr", "-CA", f"{p}/ca.crt", "-CAkey", f"{p}/ca.key",
            "-CAcreateserial", "-days", "3650", "-sha256", "-extfile", f"{p}/tls.ext", "-out", f"{p}/tls.crt")

    def _install_webhooks(self, port):
        """The chart's webhook configurations (helm template of chart/webhooks.yaml with the
        chart's default admissions), pointed at https://127.0.0.1:PORT/<path> with our CA."""
        with tempfile.TemporaryDirectory() as chart:
            os.makedirs(os.path.join(chart, "templates"))
            with open(os.path.join(chart, "Chart.yaml"), "w") as f:
                f.write("apiVersion: v2\nname: volcano-webhooks\nversion: 0.0.1\n")
            shutil.copy(os.path.join(self.baseline, "chart", "webhooks.yaml"), os.path.join(chart, "templates"))
            values = os.path.join(chart, "values.yaml")
            with open(values, "w") as f:
                yaml.safe_dump({"custom": {"admission_enable": True,
                                           "enabled_admissions": self.admissions}}, f)
            r = subprocess.run([os.path.join(self.tools, "helm"), "template", "volcano", chart,
                                "--namespace", self.namespace, "-f", values],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SideError(f"helm template of the Volcano webhooks failed: {r.stderr}")
        ca = base64.b64encode(open(self._path("pki", "ca.crt"), "rb").read()).decode()
        docs = [d for d in yaml.safe_load_all(r.stdout) if d]
        for d in docs:
            for hook in d["webhooks"]:
                path = hook["clientConfig"]["service"]["path"].strip()
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca}
        self.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))

    def default_scheduler_conf(self):
        return open(os.path.join(self.baseline, "volcano-scheduler.conf")).read()

    def start_daemons(self, scheduler_conf):
        kubeconfig = self.env["TEPHRA_KUBECONFIG_ADMIN"]
        p_webhook, p_webhook_health, p_cm_health, p_cm_metrics, p_sched_health, p_sched_metrics = self._ports()
        conf = self._path("volcano-scheduler.conf")
        with open(conf, "w") as f:
            f.write(scheduler_conf)
        self.ensure_admission()
        self._start("vc-controller-manager", [
            os.path.join(self.bin, "vc-controller-manager"), f"--kubeconfig={kubeconfig}", "--leader-elect=false", "--scheduler-name=volcano",
            "--kube-api-qps=50", "--kube-api-burst=100", "--worker-threads=3",
            "--worker-threads-for-podgroup=5", "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{p_cm_health}", "--enable-metrics=true",
            f"--listen-address=127.0.0.1:{p_cm_metrics}", "--logtostderr", "-v=2"], p_cm_health)
        self._start("vc-scheduler", [
            os.path.join(self.bin, "vc-scheduler"), f"--kubeconfig={kubeconfig}", f"--scheduler-conf={conf}", "--scheduler-name=volcano",
            "--leader-elect=false", "--schedule-period=1s", "--kube-api-qps=2000", "--kube-api-burst=2000",
            "--enable-healthz=true", f"--healthz-address=127.0.0.1:{p_sched_health}",
            "--enable-metrics=true", f"--listen-address=127.0.0.1:{p_sched_metrics}",
            "--logtostderr", "-v=2"], p_sched_health)

    def ensure_admission(self):
        if "vc-webhook-manager" in self._running():
            return
        kubeconfig = self.env["TEPHRA_KUBECONFIG_ADMIN"]
        p_webhook, p_webhook_health = self._ports()[:2]
        p = self._path("pki")
        self._start("vc-webhook-manager", [
            os.path.join(self.bin, "vc-webhook-manager"), f"--kubeconfig={kubeconfig}", "--listen-address=127.0.0.1", f"--port={p_webhook}",
            f"--webhook-url=https://127.0.0.1:{p_webhook}", f"--tls-cert-file={p}/tls.crt",
            f"--tls-private-key-file={p}/tls.key", f"--ca-cert-file={p}/ca.crt",
            f"--enabled-admission={self.admissions}",
            f"--admission-conf={self.baseline}/chart/volcano-admission.conf",
            "--webhook-namespace=volcano-system", "--webhook-service-name=volcano-admission-service",
            "--kube-api-qps=50", "--kube-api-burst=100", "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{p_webhook_health}", "--logtostderr", "-v=2"], p_webhook_health)

    def stop_daemons(self, keep_admission=False):
        self._stop([d for d in self.daemons if not (keep_admission and d == "vc-webhook-manager")])

    def logs(self):
        return [os.path.join(self.dir, "logs", f"{d}.log") for d in self.daemons]


class KubeSchedulerSide(Side):
    """kube-scheduler as the oracle for placement validity: a profile whose schedulerName is
    volcano, so the scenario's pods are its. Nothing admits or enqueues anything here, so the
    scenarios it is compared on use plain pods and workloads (StatefulSets), which
    kube-controller-manager runs."""
    kind = "kube-scheduler"

    def installed(self):
        return os.path.exists(self._work("installed"))

    def install(self):
        os.makedirs(self._work(), exist_ok=True)
        self.kubectl("apply", "--server-side", "--force-conflicts", "-f", os.path.join(self.root, "crds"))
        for crd in ("queues.scheduling.volcano.sh", "podgroups.scheduling.volcano.sh"):
            self.kubectl("wait", "--for=condition=Established", f"crd/{crd}", "--timeout=60s")
        self.cluster.refresh_discovery()
        open(self._work("installed"), "w").close()

    def default_scheduler_conf(self):
        return ""

    def ensure_admission(self):
        pass

    def _queues_open(self, names):
        return True  # no controller opens them here, and nothing reads them

    def start_daemons(self, scheduler_conf):
        (port,) = free_ports(1)
        config = self._work("config.yaml")
        with open(config, "w") as f:
            yaml.safe_dump({
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": self.env["TEPHRA_KUBECONFIG_ADMIN"],
                                     "qps": 2000, "burst": 2000},
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": "volcano"}],
            }, f)
        self._start("kube-scheduler", [
            os.path.join(self.tools, "kube-scheduler"), f"--config={config}",
            "--bind-address=127.0.0.1", f"--secure-port={port}", f"--cert-dir={self._work('certs')}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--authentication-skip-lookup=true"], port)

    def stop_daemons(self, keep_admission=False):
        self._stop()

    def version(self):
        """The release the control plane's tools build (hack/build-tools.sh)."""
        r = subprocess.run([os.path.join(self.tools, "kube-scheduler"), "--version"],
                           capture_output=True, text=True)
        return r.stdout.strip().split()[-1] if r.returncode == 0 and r.stdout.strip() else "unknown"

    def logs(self):
        return [os.path.join(self.dir, "logs", "kube-scheduler.log")]
