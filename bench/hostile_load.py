#!/usr/bin/env python3
"""Hostile load on tephra-admission's HTTPS server: its memory, and other users' latency, during
a burst of large review bodies and a crowd of idle connections (issue 17, reproductions 2-3).

    bench/hostile_load.py --port PORT --pid PID --ca CA_FILE [--json FILE]
        [--burst 200] [--body-mib 3] [--idle 2000] [--idle-seconds 10] [--slow 2]

Phases, each bounded in count and time; every connection goes to 127.0.0.1:
  baseline  RSS of PID after a few small reviews and a quiet second
  burst     --burst connections at once, each POSTing one ~--body-mib MiB Job review
            to /jobs/mutate (a large annotation: big, but linear to decode)
  slow      --slow reviews of a Job with --slow-labels labels to /jobs/mutate, all at once
            (slow to mutate on a build where that is quadratic)
  idle      --idle connections that finish the TLS handshake and send nothing, held for
            --idle-seconds, then closed
After each phase the server gets --settle seconds before its RSS is read again.

Throughout, a probe (a process of its own) sends a small Job review to /jobs/validate on a
fresh connection every 200 ms, as another user's `kubectl create` would reach the webhook; its
latency (connect, handshake, request, answer) and status are recorded per phase, and so is
/healthz on the serving port. RSS is sampled from /proc/PID/status every 50 ms for the peak.

Prints one table; --json writes the numbers. bench/hostile-load.sh starts the daemon and runs
this against it.
"""
import argparse
import json
import multiprocessing
import queue
import resource
import socket
import ssl
import sys
import threading
import time

HOST = "127.0.0.1"
TIMEOUT = 30.0  # every socket operation; a phase never waits longer than this for one answer


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def job(name, labels=None, annotation_bytes=0):
    metadata = {"name": name, "namespace": "default"}
    if labels:
        metadata["labels"] = labels
    if annotation_bytes:
        metadata["annotations"] = {"example.com/blob": "x" * annotation_bytes}
    container = {"name": "main", "image": "busybox", "command": ["sleep", "1"],
                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": metadata,
            "spec": {"minAvailable": 1, "schedulerName": "volcano", "queue": "default",
                     "tasks": [{"name": "worker", "replicas": 1,
                                "template": {"spec": {"restartPolicy": "Never",
                                                      "containers": [container]}}}]}}


def review(obj, uid):
    return json.dumps({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid,
                    "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
                    "resource": {"group": "batch.volcano.sh", "version": "v1alpha1",
                                 "resource": "jobs"},
                    "name": obj["metadata"]["name"], "namespace": "default",
                    "operation": "CREATE", "userInfo": {"username": "load"},
                    "object": obj, "dryRun": False}}).encode()


def post(path, body):
    head = (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head, body


class Target:
    def __init__(self, port, ca):
        self.port = port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.check_hostname = False  # the serving certificate names 127.0.0.1 as an IP SAN

    def connect(self, timeout=TIMEOUT):
        raw = socket.create_connection((HOST, self.port), timeout=timeout)
        try:
            return self.ctx.wrap_socket(raw)
        except Exception:
            raw.close()
            raise

    def request(self, head, body=b"", timeout=TIMEOUT):
        """One request on a fresh connection: (status or error text, seconds)."""
        start = time.monotonic()
        try:
            with self.connect(timeout) as s:
                try:
                    s.sendall(head)
                    view = memoryview(body)
                    for i in range(0, len(body), 256 * 1024):
                        s.sendall(view[i:i + 256 * 1024])
                except (BrokenPipeError, ConnectionResetError):
                    pass  # refused before the body was read: the answer may still be there
                data = b""
                while b"\r\n" not in data:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                while s.recv(65536):  # the rest, until the server closes
                    pass
            status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed"
        except (OSError, ssl.SSLError) as e:
            status = type(e).__name__
        return status, time.monotonic() - start


class Sampler(threading.Thread):
    """RSS every 50 ms; peak() since the last reset."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.stop, self.lock, self.max = pid, threading.Event(), threading.Lock(), 0.0

    def run(self):
        while not self.stop.wait(0.05):
            value = rss_mb(self.pid)
            with self.lock:
                self.max = max(self.max, value)

    def reset(self):
        with self.lock:
            peak, self.max = self.max, rss_mb(self.pid)
        return peak


def probe_loop(port, ca, stop, out):
    """Another user's small review every 200 ms, and /healthz on the serving port. Runs in its
    own process, so the load generator's threads do not delay it."""
    target = Target(port, ca)
    n = 0
    while not stop.wait(0.2):
        n += 1
        head, body = post("/jobs/validate", review(job(f"probe-{n}"), f"probe-{n}"))
        out.put(("create", *target.request(head, body, timeout=10)))
        out.put(("healthz", *target.request(
            f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode(),
            timeout=10)))


class Probe:
    def __init__(self, port, ca):
        self.stop, self.out = multiprocessing.Event(), multiprocessing.Queue()
        self.process = multiprocessing.Process(target=probe_loop,
                                               args=(port, ca, self.stop, self.out), daemon=True)

    def start(self):
        self.process.start()

    def take(self):
        """(creates, healthz) answered since the previous call."""
        results, health = [], []
        while True:
            try:
                kind, status, seconds = self.out.get_nowait()
            except queue.Empty:
                return results, health
            (results if kind == "create" else health).append((status, seconds))

    def finish(self):
        self.stop.set()
        self.process.join(15)


def summary(results):
    if not results:
        return {"n": 0}
    latencies = sorted(t for _, t in results)
    statuses = {}
    for status, _ in results:
        statuses[status] = statuses.get(status, 0) + 1
    return {"n": len(results), "max_s": round(latencies[-1], 3),
            "p50_s": round(latencies[len(latencies) // 2], 3),
            "over_1s": sum(1 for t in latencies if t > 1.0), "statuses": statuses}


def run_concurrently(n, fn, deadline_s):
    results = [None] * n
    def one(i):
        results[i] = fn(i)
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    end = time.monotonic() + deadline_s
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    return [r if r is not None else ("unfinished", deadline_s) for r in results]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--burst", type=int, default=200)
    p.add_argument("--body-mib", type=float, default=3.0)
    p.add_argument("--slow", type=int, default=2)
    p.add_argument("--slow-labels", type=int, default=20000)
    p.add_argument("--idle", type=int, default=2000)
    p.add_argument("--idle-seconds", type=float, default=10)
    p.add_argument("--settle", type=float, default=5)
    p.add_argument("--label", default="")
    p.add_argument("--json")
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, a.idle + a.burst + 256)), hard))

    target = Target(a.port, a.ca)
    sampler = Sampler(a.pid)
    sampler.start()
    for i in range(5):
        target.request(*post("/jobs/validate", review(job(f"warm-{i}"), f"warm-{i}")))
    time.sleep(1)
    out = {"label": a.label, "baseline_rss_mb": round(rss_mb(a.pid), 1), "phases": {}}
    sampler.reset()
    probe = Probe(a.port, a.ca)
    probe.start()

    def phase(name, action):
        sampler.reset()
        probe.take()
        started = time.monotonic()
        answers = action()
        seconds = time.monotonic() - started
        peak = sampler.reset()
        time.sleep(a.settle)
        probes, health = probe.take()
        peak = max(peak, sampler.reset())
        out["phases"][name] = {
            "seconds": round(seconds, 1), "peak_rss_mb": round(peak, 1),
            "after_rss_mb": round(rss_mb(a.pid), 1), "answers": summary(answers),
            "probe": summary(probes), "healthz": summary(health)}

    # Large bodies, all at once.
    big = review(job("big", annotation_bytes=int(a.body_mib * 1024 * 1024) - 4096), "big")
    phase("burst", lambda: run_concurrently(
        a.burst, lambda i: target.request(*post("/jobs/mutate", big)), 120))

    # Reviews that are slow to mutate where that is quadratic in the labels.
    labels = {f"label-{i:06d}": "v" for i in range(a.slow_labels)}
    slow = review(job("labels", labels=labels), "labels")
    phase("slow", lambda: run_concurrently(
        a.slow, lambda i: target.request(*post("/jobs/mutate", slow), timeout=120), 150))

    # Idle connections: handshake done, nothing sent.
    def idle():
        held, failed = [], 0
        end = time.monotonic() + 60
        for _ in range(a.idle):
            if time.monotonic() > end:
                break
            try:
                held.append(target.connect(timeout=5))
            except (OSError, ssl.SSLError):
                failed += 1
        time.sleep(a.idle_seconds)
        for s in held:
            s.close()
        return [("held", 0.0)] * len(held) + [("refused", 0.0)] * failed
    phase("idle", idle)

    probe.finish()
    sampler.stop.set()
    print(f"{a.label or 'tephra-admission'}: baseline RSS {out['baseline_rss_mb']} MB")
    print(f"{'phase':8} {'secs':>6} {'peak MB':>8} {'after MB':>9} {'probe max s':>12} "
          f"{'>1s':>4} {'healthz max s':>14}  answers / probe statuses")
    for name, ph in out["phases"].items():
        print(f"{name:8} {ph['seconds']:6.1f} {ph['peak_rss_mb']:8.1f} {ph['after_rss_mb']:9.1f} "
              f"{ph['probe'].get('max_s', 0):12.3f} {ph['probe'].get('over_1s', 0):4d} "
              f"{ph['healthz'].get('max_s', 0):14.3f}  {ph['answers'].get('statuses')} / "
              f"{ph['probe'].get('statuses')}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
