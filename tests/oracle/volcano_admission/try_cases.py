"""Sends each case to a control plane with `kubectl create --dry-run=server` and prints the
verdict: OK, or who refused (schema = the API server's CRD validation, webhook = admission)."""
import copy, json, subprocess, sys

def job(mut=None, name="j"):
    j = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
         "metadata": {"name": name, "namespace": "t"},
         "spec": {"minAvailable": 1, "schedulerName": "volcano", "queue": "default",
                  "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                      "containers": [{"name": "c", "image": "busybox"}],
                      "restartPolicy": "Never"}}}]}}
    if mut: mut(j)
    return j

def c0(j): return j["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
def ps(j): return j["spec"]["tasks"][0]["template"]["spec"]

def run(obj):
    r = subprocess.run(["kubectl", "create", "--dry-run=server", "-o", "name", "-f", "-"],
                       input=json.dumps(obj), capture_output=True, text=True)
    if r.returncode == 0:
        return "OK"
    msg = r.stderr.strip().replace("\n", " ")
    who = "webhook" if "admission webhook" in msg else "schema"
    return f"REFUSED({who}): {msg[:600]}"

def s(path_fn, value):
    def m(j):
        path_fn(j, value)
    return m

CASES = []
def case(name, mut):
    CASES.append((name, mut))

if __name__ == "__main__":
    # try_cases.py CASEFILE [--json OUT]: OUT also gets [{name, object, volcano}] with the
    # verdicts, for unit tests that put the same objects through Tephra's webhook.
    exec(open(sys.argv[1]).read())
    out = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--json" else None
    table = []
    for name, obj in CASES:
        verdict = run(obj)
        print(f"{name}\t{verdict}")
        sys.stdout.flush()
        table.append({"name": name, "object": obj, "volcano": verdict})
    if out:
        with open(out, "w") as f:  # one case per line
            f.write("[\n" + ",\n".join(json.dumps(c, sort_keys=True) for c in table) + "\n]\n")
