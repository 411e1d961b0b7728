#!/usr/bin/env python3
"""The scheduler's dashboard in a real browser, against a real cluster with a workload.

Starts a control plane of its own (etcd, kube-apiserver, kwok nodes), installs Tephra as a user
does (the chart in local mode, the three daemons with the chart's identities, the dashboard on),
submits running and waiting gangs in two queues plus an Event whose text is markup, then loads
every page in headless Chromium and checks what the page shows through its DOM (after the page's
script ran), and that markup from the cluster is shown as text and never run. Screenshots of each
page go to OUT_DIR.

    dashboard_browser_test.py SRC BIN OUT_DIR

Exit 77 (CTest: skipped) when Chromium is not installed (hack/install-deps.sh browser).
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SRC, BIN, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
NAME = f"dashboard-{os.getpid()}"
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
failures = []


def say(msg):
    print(f"[dashboard] {msg}", flush=True)


def expect(ok, what):
    if not ok:
        failures.append(what)
        say(f"FAIL: {what}")
    return ok


def sh(*args, check=True, env=None, input=None):
    r = subprocess.run(args, cwd=SRC, capture_output=True, text=True, env=env, input=input)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r.stdout


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


# ----------------------------------------------------------------------------- a small DOM
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        out, stack = [], [self]
        while stack:  # iterative: no recursion whose depth the page controls
            n = stack.pop()
            if isinstance(n, str):
                out.append(n)
            else:
                stack.extend(reversed(n.children))
        return "".join(out)

    def all(self):
        stack = [self]
        while stack:
            n = stack.pop()
            if isinstance(n, Node):
                yield n
                stack.extend(reversed(n.children))

    def find(self, tag=None, id=None, cls=None, **attrs):
        for n in self.all():
            if tag and n.tag != tag:
                continue
            if id and n.attrs.get("id") != id:
                continue
            if cls and cls not in (n.attrs.get("class") or "").split():
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            yield n

    def first(self, **kw):
        return next(self.find(**kw), None)


class Builder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def dom(text):
    b = Builder()
    b.feed(text)
    return b.root


# ----------------------------------------------------------------------------- the browser
def load(browser, profile, url, shot=None):
    """The page's DOM after its script ran (virtual time lets its fetches finish)."""
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--no-proxy-server", f"--user-data-dir={profile}", "--hide-scrollbars",
            "--virtual-time-budget=8000"]
    r = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"chromium --dump-dom {url}: exit {r.returncode}: {r.stderr[-1500:]}")
    if shot:
        subprocess.run(base + ["--window-size=1280,1000", f"--screenshot={shot}", url],
                       capture_output=True, text=True, timeout=120)
    page = dom(r.stdout)
    body = page.first(tag="body")
    if body is None or body.attrs.get("data-loaded") != "true":
        err = page.first(id="error")
        raise RuntimeError(f"{url}: the page did not load: {err.text() if err else r.stdout[:500]}")
    return page


def get(url, method="GET"):
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def eventually(seconds, fn, what):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            value = fn()
            if value:
                return value
        except Exception as e:  # keep polling; report the last problem
            last = e
        time.sleep(0.5)
    raise RuntimeError(f"timed out waiting for {what}" + (f": {last}" if last else ""))


# ----------------------------------------------------------------------------- the workload
def gang(name, queue, replicas, cpu, min_available=None):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "team"},
            "spec": {"schedulerName": "volcano", "queue": queue,
                     "minAvailable": min_available or replicas,
                     "tasks": [{"name": "worker", "replicas": replicas, "template": {"spec": {
                         "restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": {"requests": {"cpu": str(cpu), "memory": "1Gi"}}}]}}}]}}


def main():
    browser = chromium()
    if browser is None:
        say("SKIP: Chromium is not installed (hack/install-deps.sh browser)")
        return 77
    os.makedirs(OUT, exist_ok=True)
    env = dict(os.environ)
    try:
        say(f"starting control plane {NAME}")
        sh("hack/control-plane.sh", "up", "--name", NAME, "--nodes", "4", "--node-cpu", "8",
           "--node-memory", "32Gi")
        # The control plane's environment (KUBECONFIG, PATH with kubectl and helm, ...), as a
        # shell that evaluates it sees it.
        dump = sh("bash", "-c", f'eval "$(hack/control-plane.sh env --name {NAME})" && env -0')
        env = dict(kv.split("=", 1) for kv in dump.split("\0") if "=" in kv)
        ports = sh("python3", "hack/free_ports.py", "6").split()
        dash = f"http://127.0.0.1:{ports[5]}"
        r = subprocess.run(
            ["helm", "install", "tephra", "charts/tephra", "--namespace", env["TEPHRA_NAMESPACE"],
             "--create-namespace", "-f", "charts/tephra/values-local.yaml",
             "--set", f"admission.port={ports[0]}", "--set", f"admission.healthzPort={ports[1]}",
             "--set", f"controllerManager.healthzPort={ports[2]}",
             "--set", f"scheduler.metricsPort={ports[3]}", "--set", "scheduler.admin.enabled=true",
             "--set", f"scheduler.admin.port={ports[4]}", "--set", "scheduler.dashboard.enabled=true",
             "--set", f"scheduler.dashboard.port={ports[5]}"],
            cwd=SRC, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"helm install: {r.stderr[-2000:]}")
        sh("hack/local-daemons.sh", "start", "--name", NAME, "--bin", BIN, env=env)

        kubectl = lambda *a, **kw: sh("kubectl", *a, env=env, **kw)  # noqa: E731
        objects = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "team-a"}, "spec": {"weight": 2}},
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "team-b"}, "spec": {"weight": 1, "capability": {"cpu": "8"}}},
        ]
        kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        jobs = [gang("train-a", "team-a", 3, 1), gang("huge", "team-a", 2, 12),
                gang("serve-b", "team-b", 2, 2), gang("over-cap", "team-b", 3, 4)]
        kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": jobs}))

        def job_doc(name):
            status, _, body = get(f"{dash}/api/v1/job?namespace=team&name={name}")
            return json.loads(body) if status == 200 else None

        eventually(90, lambda: (job_doc("train-a") or {}).get("phase") == "Running", "train-a Running")
        eventually(90, lambda: (job_doc("serve-b") or {}).get("phase") == "Running", "serve-b Running")
        huge = eventually(90, lambda: (lambda d: d if d and d["explanation"].get("unplaced") else None)(
            job_doc("huge")), "an explanation of huge with fit errors")
        eventually(90, lambda: (job_doc("over-cap") or {}).get("explanation", {}).get("considered"),
                   "a session considering over-cap")
        # An Event whose reason and message are markup, about huge's PodGroup.
        kubectl("create", "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "hostile-event", "namespace": "team"},
            "involvedObject": {"kind": "PodGroup", "namespace": "team", "name": huge["name"],
                               "apiVersion": "scheduling.volcano.sh/v1beta1"},
            "reason": "Probe", "message": HOSTILE, "type": "Warning", "count": 1,
            "firstTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "lastTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "source": {"component": "dashboard-test"}}))
        time.sleep(11)  # a full history bucket with sessions and binds

        with tempfile.TemporaryDirectory() as profile:
            check_pages(browser, profile, dash, huge)
        check_api(dash)
    except Exception as e:  # a setup step failed: say which, with the daemons' logs
        failures.append(str(e))
        say(f"FAIL: {e}")
        cp = env.get("TEPHRA_CP_DIR", "")
        for log in ("tephra-scheduler.log", "tephra-controller-manager.log"):
            path = os.path.join(cp, "logs", log)
            if cp and os.path.exists(path):
                say(f"----- tail of {path}")
                print("".join(open(path).readlines()[-25:]))
    finally:
        subprocess.run(["hack/local-daemons.sh", "stop", "--name", NAME], cwd=SRC, env=env,
                       capture_output=True)
        subprocess.run(["hack/control-plane.sh", "down", "--name", NAME], cwd=SRC,
                       capture_output=True)
    say(f"{len(failures)} failure(s); screenshots in {OUT}")
    return 1 if failures else 0


def check_pages(browser, profile, dash, huge):
    shot = lambda name: os.path.join(OUT, f"dashboard-{name}.png")  # noqa: E731

    # Queues: a card per queue with bars; team-a has a deserved share, team-b its capability.
    page = load(browser, profile, f"{dash}/#/queues", shot("queues"))
    cards = {n.attrs.get("data-queue"): n for n in page.find(cls="queue-row")}
    expect({"root", "default", "team-a", "team-b"} <= set(cards), f"queue cards: {sorted(cards)}")
    a = cards.get("team-a")
    if expect(a is not None, "team-a card"):
        expect(a.first(cls="bar-allocated") is not None, "team-a has no allocation bar")
        cpu = a.first(cls="bar-label", data_dim="cpu")
        expect(cpu is not None and "allocated 3" in cpu.text() and "deserved" in cpu.text(),
               f"team-a cpu bar label: {cpu.text() if cpu else None}")
    b = cards.get("team-b")
    if expect(b is not None, "team-b card"):
        cpu = b.first(cls="bar-label", data_dim="cpu")
        expect(cpu is not None and "capability 8" in cpu.text(),
               f"team-b cpu bar label: {cpu.text() if cpu else None}")

    # Jobs: every job, the waiting one saying why.
    page = load(browser, profile, f"{dash}/#/jobs", shot("jobs"))
    rows = {n.attrs.get("data-job", "").split("/")[1].rsplit("-", 5)[0]: n
            for n in page.find(cls="job-row")}
    expect({"train-a", "huge", "serve-b", "over-cap"} <= set(rows), f"job rows: {sorted(rows)}")
    why = rows.get("huge").first(cls="why").text() if rows.get("huge") else ""
    expect("Insufficient cpu" in why, f"huge's row does not say why it waits: {why!r}")
    page = load(browser, profile, f"{dash}/#/jobs?queue=team-b")
    rows = [n.attrs.get("data-job") for n in page.find(cls="job-row")]
    expect(len(rows) == 2 and all("-b-" in r or "over-cap" in r for r in rows),
           f"queue filter team-b: {rows}")

    # The waiting job: the reason with its node count, what would have to change, the markup
    # Event shown as text.
    page = load(browser, profile, f"{dash}/#/job/team/huge", shot("job-waiting"))
    summary = page.first(id="job-summary")
    expect(summary is not None and "Insufficient cpu" in summary.text() and "4 nodes" in summary.text(),
           f"huge's summary: {summary.text() if summary else None}")
    reasons = page.first(id="job-reasons")
    reason = reasons.first(cls="reason") if reasons else None
    expect(reason is not None and reason.first(cls="nodes").text() == "4" and
           "Insufficient cpu" in reason.text(), f"huge's fit errors: {reason.text() if reason else None}")
    hints = page.first(id="job-hints")
    expect(hints is not None and "12 cpu" in hints.text(), f"huge's hints: {hints.text() if hints else None}")
    messages = [n.text() for n in page.find(cls="event-message")]
    expect(HOSTILE in messages, f"the markup Event is not shown as text: {messages}")
    expect(page.first(tag="img") is None, "markup from an Event became an <img> element")
    scripts = [n.attrs.get("src") for n in page.find(tag="script")]
    expect(scripts == ["/app.js"], f"scripts in the page: {scripts}")
    title = page.first(tag="title")
    expect(title is not None and title.text() == "Tephra scheduler",
           f"the page's title changed (a script from the cluster ran?): {title.text() if title else None}")
    pods = list(page.find(cls="pod-row"))
    expect(len(pods) == 2, f"huge's pods: {len(pods)}")

    # The job its queue does not admit says so.
    page = load(browser, profile, f"{dash}/#/job/team/over-cap")
    summary = page.first(id="job-summary")
    expect(summary is not None and ("team-b" in summary.text() or "admit" in summary.text()),
           f"over-cap's summary: {summary.text() if summary else None}")

    # A running job lists its pods on nodes.
    page = load(browser, profile, f"{dash}/#/job/team/train-a", shot("job-running"))
    nodes = page.first(id="job-nodes")
    expect(nodes is not None and "kwok-node-" in nodes.text(), f"train-a's nodes: {nodes.text() if nodes else None}")

    # Cluster: a cell per node, pending pods by reason.
    page = load(browser, profile, f"{dash}/#/cluster", shot("cluster"))
    cells = list(page.find(cls="cell"))
    expect(len(cells) == 4, f"heat map cells: {len(cells)}")
    reasons = {n.first(cls="reason-text").text(): n.first(cls="pods").text()
               for n in page.find(cls="pending-reason")}
    expect(reasons.get("Insufficient cpu") == "2", f"pending pods by reason: {reasons}")
    expect(any("admitted" in r for r in reasons), f"no 'not admitted' reason: {reasons}")

    # Over time: the four plots, with a bind-rate line and the queues' series.
    page = load(browser, profile, f"{dash}/#/history", shot("history"))
    for plot in ("plot-bind-rate", "plot-pending", "plot-queues", "plot-session"):
        expect(page.first(tag="svg", id=plot) is not None, f"no plot {plot}")
    bind = page.first(tag="svg", id="plot-bind-rate")
    expect(bind is not None and bind.first(tag="path") is not None, "the bind-rate plot has no line")
    queues = page.first(tag="svg", id="plot-queues")
    series = [n.attrs.get("data-series") for n in queues.find(tag="path")] if queues else []
    expect("team-a allocated" in series and "team-a deserved" in series, f"queue series: {series}")


def check_api(dash):
    status, headers, body = get(f"{dash}/api/v1/jobs?limit=0")
    expect(status == 400 and "limit" in body, f"limit=0: {status} {body}")
    status, _, body = get(f"{dash}/api/v1/job?name=x")
    expect(status == 400 and "namespace: required" in body, f"job without namespace: {status} {body}")
    status, _, body = get(f"{dash}/api/v1/job?namespace=team&name=" + "x" * 300)
    expect(status == 400 and "name: at most 253" in body, f"long name: {status} {body}")
    status, _, _ = get(f"{dash}/api/v1/queues", method="POST")
    expect(status == 405, f"POST answered {status}")
    status, headers, _ = get(f"{dash}/")
    csp = headers.get("Content-Security-Policy", "")
    expect(status == 200 and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp,
           f"page headers: {status} {headers}")
    status, _, body = get(f"{dash}/api/v1/history")
    doc = json.loads(body)
    expect(status == 200 and doc["buckets"] and sum(b["binds"] for b in doc["buckets"]) >= 5,
           f"history binds: {body[:300]}")


if __name__ == "__main__":
    sys.exit(main())
