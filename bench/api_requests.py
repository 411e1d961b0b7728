#!/usr/bin/env python3
"""API server requests one benchmark run caused, per bound pod.

  bench/api_requests.py BEFORE AFTER RUN_JSON

BEFORE and AFTER are kube-apiserver /metrics scraped around the run; RUN_JSON is bench_e2e's
summary of the run, which gains "api_writes_per_pod" (creates, updates, patches and deletes,
events included) and "api_requests_per_pod" (the non-zero rows by verb and resource). Writes are
what the API server spends its time on in these runs, so this says why one contender is slower.
"""
import collections
import json
import re
import sys

WRITE_VERBS = {"POST", "PUT", "PATCH", "DELETE", "APPLY"}


def requests(path):
    counts = collections.Counter()
    for line in open(path):
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line[: line.index("}")]))
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        counts[(labels.get("verb", ""), resource)] += float(line.rsplit(" ", 1)[1])
    return counts


def main():
    before, after, run_path = sys.argv[1:4]
    run = json.load(open(run_path))
    pods = max(1, run.get("bound") or run.get("pods") or 1)
    a, b = requests(before), requests(after)
    rows = {k: b[k] - a[k] for k in b if b[k] - a[k] > 0}
    per_pod = {"%s %s" % k: round(v / pods, 2) for k, v in sorted(rows.items(), key=lambda kv: -kv[1])
               if v / pods >= 0.01}
    run["api_requests_per_pod"] = per_pod
    run["api_writes_per_pod"] = round(sum(v for (verb, _), v in rows.items() if verb in WRITE_VERBS) / pods, 2)
    json.dump(run, open(run_path, "w"), indent=1)
    print("%s: %.2f API writes per bound pod" % (run_path, run["api_writes_per_pod"]), file=sys.stderr)


if __name__ == "__main__":
    main()
