def Q(name, spec=None, ann=None):
    q = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec or {}}
    if ann: q["metadata"]["annotations"] = ann
    return q
case("capability pods 1.5", Q("q1", {"capability": {"pods": "1.5"}}))
case("capability hugepages-2Mi 1.5", Q("q1", {"capability": {"hugepages-2Mi": "1.5"}}))
case("capability nvidia.com/gpu 2", Q("q1", {"capability": {"nvidia.com/gpu": "2"}}))
case("deserved example.com/gpu 0.5", Q("q1", {"deserved": {"example.com/gpu": "500m"}}))
case("guarantee example.com/gpu 0.5 deserved 1", Q("q1", {"deserved": {"example.com/gpu": "1"}, "guarantee": {"resource": {"example.com/gpu": "500m"}}}))
case("capability kubernetes.io/foo 1.5", Q("q1", {"capability": {"kubernetes.io/foo": "1.5"}}))
case("capability requests.example.com/foo 1.5", Q("q1", {"capability": {"requests.example.com/foo": "1.5"}}))
case("capability Bad/Name 1", Q("q1", {"capability": {"bad name/x": "1"}}))
case("guarantee empty resource, deserved none", Q("q1", {"guarantee": {}}))
