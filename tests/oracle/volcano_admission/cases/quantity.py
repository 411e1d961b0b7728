# Quantities too large for int64 accounting (issue 54.3), and a pod template nested deeper than
# Tephra's webhook reads (issue 54.2). Exponents stay small: the API server itself takes minutes
# over a quantity such as 1e2147483647.
def J(f): return job(f)
def req(resources):
    def m(j): c0(j)["resources"] = resources
    return m
def P(spec, name="pg1"):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": name, "namespace": "t"}, "spec": spec}
def Q(name, spec=None):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec or {}}
for q in ["1e400", "10e399", "1e19", "9223372036854775807", "9223372036854775808m", "9223372036854775807m", "1e16", "100Ei", "8Ei"]:
    case(f"requests cpu {q}", J(req({"requests": {"cpu": q}})))
    case(f"limits cpu {q}", J(req({"limits": {"cpu": q}})))
for q in ["1e400", "100Ei", "9223372036854775808", "9223372036854775807"]:
    case(f"requests memory {q}", J(req({"requests": {"memory": q}})))
case("requests example.com/gpu 1e400", J(req({"requests": {"example.com/gpu": "1e400"}, "limits": {"example.com/gpu": "1e400"}})))
case("overhead cpu 1e400", J(lambda j: ps(j).__setitem__("overhead", {"cpu": "1e400"})))
case("init container requests cpu 1e400", J(lambda j: ps(j).__setitem__("initContainers", [{"name": "i", "image": "x", "resources": {"requests": {"cpu": "1e400"}}}])))
for q in ["1e400", "100Ei", "9223372036854775807"]:
    case(f"queue capability cpu {q}", Q("q-big", {"capability": {"cpu": q}}))
    case(f"queue deserved cpu {q}", Q("q-big", {"deserved": {"cpu": q}}))
    case(f"queue guarantee cpu {q}", Q("q-big", {"guarantee": {"resource": {"cpu": q}}}))
    case(f"podgroup minResources cpu {q}", P({"minMember": 1, "queue": "default", "minResources": {"cpu": q}}))
def deep_affinity(levels):
    def m(j):
        v = {}
        for _ in range(levels):
            v = {"nodeAffinity": v}
        ps(j)["affinity"] = v
    return m
case("affinity nested 200 levels", J(deep_affinity(200)))
